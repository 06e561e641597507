"""Vendor libraries' files: where a library is, and mapping it without holding Python's lock.

``locate(soname)`` gives the copy the bindings will open: a pip wheel's (``nvidia/*/lib/`` on
``sys.path``, what ``rocm_array[nvidia]`` and PyTorch install, and where cuda-pathfinder looks
first) or else the bare soname, for the dynamic loader's own search. ``map_first`` opens a file
through the C library's ``dlopen`` called as a foreign function, which runs without Python's
lock: ``ctypes.CDLL`` holds it while the loader maps a file (cuBLASLt and cuDNN's engines take
40-75 ms), and so does importing a binding, which would stop every other thread's Python for that
long. A later open of the same file by the bindings finds it mapped and costs nothing.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import sys
from typing import Any

__all__ = ["locate", "map_first", "CUBLAS", "CUFFT"]

#: The files the nvidia modules open through ctypes (``cdll``), newest first (CUDA 13's, then 12's);
#: the preload maps the same.
CUBLAS = ("libcublas.so.13", "libcublas.so.12")
CUFFT = ("libcufft.so.12", "libcufft.so.11")


def locate(soname: str) -> str:
    """The path of a pip wheel's ``soname`` on ``sys.path``, else ``soname`` (the loader's search).
    Found once for a ``sys.path``: the preload looks first, on its thread, and a library's first call
    then finds its answer (the search globs each folder of ``sys.path``: about 1 ms of an H200 host's
    warm first rfft, which took 6.7 ms against 4.0 for 2e59180 in profiles, whose preload thread
    imported its FFT module and opened cuFFT)."""
    return _locate(soname, tuple(sys.path))


@functools.lru_cache(maxsize=64)
def _locate(soname: str, path: tuple[str, ...]) -> str:
    for base in path:
        found = sorted(glob.glob(os.path.join(glob.escape(base or "."), "nvidia", "*", "lib", soname)))
        if found:
            return found[0]
    return soname


_DLOPEN: Any = None


def _dlopen() -> Any:
    global _DLOPEN
    if _DLOPEN is None:
        for name in (None, "libdl.so.2"):  # (dlopen moved into libc in glibc 2.34)
            lib = ctypes.CDLL(name)
            if hasattr(lib, "dlopen"):
                lib.dlopen.argtypes, lib.dlopen.restype = [ctypes.c_char_p, ctypes.c_int], ctypes.c_void_p
                _DLOPEN = lib.dlopen
                break
        else:
            raise OSError("no dlopen in the C library")
    return _DLOPEN


def map_first(choice: tuple[str, ...]) -> str | None:
    """Map the first of ``choice`` (sonames, newest first) that opens, ``locate``'s copy, without
    Python's lock; which one it was, or None (a missing library is left to its first call, which
    says why). Mapped locally: the bindings' own open, by path or soname, finds this copy and makes
    it global where they ask for that."""
    dlopen = _dlopen()
    for name in choice:
        if dlopen(os.fsencode(locate(name)), os.RTLD_NOW | os.RTLD_LOCAL):
            return name
    return None

