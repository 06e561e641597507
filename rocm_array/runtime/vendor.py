"""The one loader of a GPU's vendor libraries: BLAS and solvers, FFT, deep-learning primitives.

``library(kind, rt)`` gives the library of ``kind`` for ``rt``'s device and stream: the
module ``runtime/<kind>_<platform>.py`` (the only place that imports the vendor's
bindings) opens it once, and every later call gets the same object. A library that
cannot be opened raises ``VendorUnavailable`` naming the library, the cause and the
fix, at every call: the cause is kept and the load not retried, except after running
out of memory, which a later call may not. One cache and one lock serve every kind, so
all of them are created, kept and reported alike.

``preload(platform)`` maps the libraries' files (BLAS, then FFT, then cuDNN) on a thread while
discovery opens the devices, without Python's lock and without importing any binding or frontend
(``libfiles``): a first call then does not wait for the dynamic loader, and the main thread's Python
never waits for the preload (``ROCM_ARRAY_PRELOAD`` chooses, ``0`` turns it off).

Where a back falls back from a vendor library to the project's own kernels, ``fallback`` says so
once per cause (a ``VendorFallbackWarning``), and ``report`` lists for ``info`` what each GPU
would use, with the versions of the packages that bring it or the command that installs it.

The protocols the platform modules implement are in ``blas.py``, ``fft.py`` and ``dnn.py``.
"""

from __future__ import annotations

import atexit
import importlib
import os
import threading
import time
import warnings
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from . import libfiles
from .protocol import DriverOutOfMemory

if TYPE_CHECKING:
    from .protocol import Runtime

__all__ = ["PIP", "KINDS", "Library", "VendorUnavailable", "VendorFallbackWarning", "library", "why", "fallback",
           "report", "preload", "PRELOAD_VAR", "PRELOADED"]


@dataclass(frozen=True)
class Library:
    """A vendor library of one platform: its name, the packages that bring it, how to install them,
    and the files the preload maps (each entry a choice of sonames, newest first: the first that opens)."""

    name: str
    packages: tuple[str, ...] = ()
    install: str = ""
    files: tuple[tuple[str, ...], ...] = ()

    def __str__(self) -> str:
        return f"{self.name} ({self.install})" if self.install else self.name


#: The README's install commands (from a clone of rocm_array, which is not on PyPI), as messages give them.
PIP = {"amd": 'python -m pip install ".[amd]" "hip-python==<your ROCm version>.*"',
       "nvidia": 'python -m pip install ".[nvidia]"'}
_NVIDIA = PIP["nvidia"]
_ROCM = "ROCm's {} and hip-python: " + PIP["amd"]
_SIM = Library("no vendor library (the simulator runs the project's own kernels only)")
#: kind -> platform -> the library.
#: cuDNN and the sub-libraries a first convolution opens (cuDNN 9 opens them itself, at the first
#: graph): mapped at discovery, a warm process's first conv2d (8x64x56x56, 3x3) took 55-63 ms on an
#: H200 against 88-96 ms left to the call (PyTorch: 66-76 ms in the same runs).
_CUDNN = (("libcudnn.so.9",), ("libcudnn_graph.so.9",), ("libcudnn_heuristic.so.9",),
          ("libcudnn_engines_precompiled.so.9",), ("libcudnn_engines_runtime_compiled.so.9",))
#: kind -> platform -> the library. Sonames: CUDA 13's, then 12's; ROCm 7's, then 6's.
KINDS: dict[str, dict[str, Library]] = {
    "blas": {"nvidia": Library("cuBLAS and cuSOLVER", ("nvmath-python", "nvidia-cublas", "nvidia-cusolver"), _NVIDIA,
                               (libfiles.CUBLAS, ("libcublasLt.so.13", "libcublasLt.so.12"),
                                ("libcusolver.so.12", "libcusolver.so.11"))),
             "amd": Library("hipBLAS and hipSOLVER", ("hip-python",), _ROCM.format("libhipblas and libhipsolver"),
                            (("libhipblas.so.3", "libhipblas.so.2"), ("libhipsolver.so.1", "libhipsolver.so.0"))),
             "sim": _SIM},
    "fft": {"nvidia": Library("cuFFT", ("nvidia-cufft",), _NVIDIA, (libfiles.CUFFT,)),
            "amd": Library("hipFFT", ("hip-python",), _ROCM.format("libhipfft"), (("libhipfft.so.0",),)),
            "sim": _SIM},
    "dnn": {"nvidia": Library("cuDNN", ("nvidia-cudnn-frontend", "nvidia-cudnn-cu13"), _NVIDIA, _CUDNN),
            "amd": Library("MIOpen", ("hip-python",), _ROCM.format("libMIOpen"), (("libMIOpen.so.1",),)),
            "sim": _SIM},
}


class VendorFallbackWarning(UserWarning):
    """rocm_array runs its own kernels where a vendor library would have run: said once per cause."""


_WARNED: set[str] = set()


def fallback(what: str, reason: str) -> None:
    """Say once (per ``what`` and ``reason``) that ``what`` runs on the project's own kernels."""
    message = f"{what} runs on rocm_array's own kernels instead of the vendor library: {reason}"
    with _LOCK:
        if message in _WARNED:
            return
        _WARNED.add(message)
    warnings.warn(message, VendorFallbackWarning, stacklevel=3)


def _versions(packages: tuple[str, ...]) -> str:
    found = []
    for p in packages:
        try:
            found.append(f"{p} {metadata.version(p)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(found)


def report(rt: Runtime) -> list[tuple[str, bool, str]]:
    """Each library ``rt``'s platform would use: (name, whether it opens, the versions of the
    packages that bring it, or why it does not open and the fix). None on the simulator."""
    out = []
    for kind, platforms in KINDS.items():
        lib = platforms[rt.properties.platform]
        if lib is _SIM:
            continue
        try:
            problem = why(kind, rt)
        except Exception as exc:  # info reports; it never stops on a library it cannot check
            problem = f"{lib} could not be checked: {type(exc).__name__}: {exc}"
        out.append((lib.name, not problem, _versions(lib.packages) if not problem else problem))
    return out


class VendorUnavailable(RuntimeError):
    """A vendor library could not be opened on a device; the message says which, why, and the fix."""


_LOCK = threading.Lock()
_OPEN: dict[tuple[str, int, int], Any] = {}
_WHY: dict[tuple[str, int, int], str] = {}


def library(kind: str, rt: Runtime) -> Any:
    """The ``kind`` library ("blas", "fft" or "dnn") of ``rt``'s device and stream, opened once."""
    key = (kind, id(rt), rt.driver.stream)
    lib = _OPEN.get(key)
    if lib is not None:
        return lib
    with _LOCK:
        if key not in _OPEN and key not in _WHY:
            if KINDS[kind][rt.platform] is _SIM:  # no module to import: say so, not its ImportError
                _WHY[key] = f"{rt.platform} device {rt.properties.index} has {_SIM.name}"
            else:
                try:
                    module = importlib.import_module(f"{__package__}.{kind}_{rt.platform}")
                    _OPEN[key] = module.open_library(rt)
                except (MemoryError, DriverOutOfMemory):
                    raise  # the device is full now; a later call may find room
                except Exception as exc:  # not installed, no library file, an incompatible version, no device
                    _WHY[key] = (f"{KINDS[kind][rt.platform]} is unavailable on {rt.platform} device "
                                 f"{rt.properties.index}: {type(exc).__name__}: {exc}")
        if key in _WHY:
            raise VendorUnavailable(_WHY[key])
        return _OPEN[key]


def why(kind: str, rt: Runtime) -> str:
    """Why ``library(kind, rt)`` raises ("" when it opens)."""
    try:
        library(kind, rt)
    except VendorUnavailable as exc:
        return str(exc)
    return ""


PRELOAD_VAR = "ROCM_ARRAY_PRELOAD"
#: The kinds preloaded by default: all, in this order. A first call that comes while its library's
#: files are still mapping waits on the loader. With cuDNN mapped first (its engines take longest,
#: up to 75 ms), a warm process's first 1024x1024 matmul took 135.8 ms against CuPy's 126.1 and a
#: first rfft 11.0 ms against 9.5 (medians of five, H100): cuBLAS and cuFFT go first. A first
#: convolution pays its frontend's import and cuDNN's heuristics anyway, which the later mapping of
#: cuDNN's files overlaps (import and a first 1x3x16x16 conv2d: 957 ms, PyTorch's 4693 ms).
PRELOADED = ("blas", "fft", "dnn")
_PRELOADS: list[threading.Thread] = []


def preload(platform: str) -> threading.Thread | None:
    """Map the files of ``platform``'s vendor libraries on a thread (``Library.files``, through
    ``libfiles.map_first``: no import, no Python lock held while the loader works) and return the
    thread. Discovery calls it before opening the devices, which takes about 250 ms on an H100, so a
    first matmul or fft does not wait for the dynamic loader. ``ROCM_ARRAY_PRELOAD`` names the kinds
    (comma-separated; default ``blas,fft,dnn``; ``0``: none, and None is returned). A file that does
    not open is left to the library's first call, which reports it."""
    from ..log import logger

    setting = os.environ.get(PRELOAD_VAR, ",".join(PRELOADED)).strip()
    names = [k.strip() for k in setting.split(",") if k.strip()] if setting != "0" else []
    unknown = [k for k in names if k not in KINDS]
    if unknown:
        logger.warning("%s=%r: %s is not a vendor library kind (expected some of %s, comma-separated, or 0); "
                       "not preloaded", PRELOAD_VAR, setting, ", ".join(unknown), ", ".join(KINDS))
    libraries = [KINDS[k][platform] for k in names if k in KINDS]
    if not any(lib.files for lib in libraries):
        return None

    def run() -> None:
        for lib in libraries:
            t0 = time.perf_counter()
            missing = [choice for choice in lib.files if libfiles.map_first(choice) is None]
            logger.debug("preloaded %s in %.0f ms%s", lib.name, (time.perf_counter() - t0) * 1e3,
                         f" (not found: {', '.join('/'.join(c) for c in missing)})" if missing else "")

    thread = threading.Thread(target=run, name=f"rocm_array preload {platform}", daemon=True)
    if not _PRELOADS:
        atexit.register(_join_preloads)
    _PRELOADS.append(thread)
    thread.start()
    return thread


def _join_preloads() -> None:
    """Let a preload finish before the interpreter tears down (a daemon thread stopped inside a
    library's loader can crash the exit)."""
    for thread in _PRELOADS:
        thread.join(timeout=30)
