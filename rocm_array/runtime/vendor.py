"""The one loader of a GPU's vendor libraries: BLAS and solvers, FFT, deep-learning primitives.

``library(kind, rt)`` gives the library of ``kind`` for ``rt``'s device and stream: the
module ``runtime/<kind>_<platform>.py`` (the only place that imports the vendor's
bindings) opens it once, and every later call gets the same object. A library that
cannot be opened raises ``VendorUnavailable`` naming the library, the cause and the
fix, at every call: the cause is kept and the load not retried, except after running
out of memory, which a later call may not. One cache and one lock serve every kind, so
all of them are created, kept and reported alike.

The protocols the platform modules implement are in ``blas.py``, ``fft.py`` and ``dnn.py``.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

from .protocol import DriverOutOfMemory

if TYPE_CHECKING:
    from .protocol import Runtime

__all__ = ["KINDS", "VendorUnavailable", "library", "why"]

_SIM = "a vendor library (the simulator has none: it runs the project's own kernels only)"
#: kind -> platform -> what the library is and what installs it.
KINDS: dict[str, dict[str, str]] = {
    "blas": {"nvidia": "cuBLAS and cuSOLVER (nvmath-python: pip install rocm_array[nvidia])",
             "amd": "hipBLAS and hipSOLVER (hip-python's hipblas and hipsolver, ROCm's libhipblas and libhipsolver)",
             "sim": _SIM},
    "fft": {"nvidia": "cuFFT (nvmath-python: pip install rocm_array[nvidia])",
            "amd": "hipFFT (hip-python's hipfft, ROCm's libhipfft)", "sim": _SIM},
    "dnn": {"nvidia": "cuDNN (pip install nvidia-cudnn-frontend nvidia-cudnn-cu12 or -cu13)",
            "amd": "MIOpen (ROCm's libMIOpen)", "sim": _SIM},
}


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
