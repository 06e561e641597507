"""Vendor libraries called through ctypes: the file opened, each call declared, each status checked.

cuBLAS (``blas_nvidia``) and cuFFT (``fft_nvidia``) are called so, not through nvmath-python's
bindings: in fresh processes on an H100, importing those bindings took 14-21 ms of a first 1024x1024
matmul (with cuSOLVER's, imported beside them) and 3.6-6.6 ms of a first 2^20-point rfft, which made
the rfft 0.85x CuPy's; opening the file the preload mapped takes under 1 ms. A module writes its
calls as the library's header does (``SIGNATURES``: each call's parameters; every call returns a
status, an int), and ``tests/test_bindings.py`` holds them to the installed header.
"""

from __future__ import annotations

import ctypes
from typing import Any

from . import libfiles
from .protocol import DriverError, DriverOutOfMemory

__all__ = ["open_declared", "declare", "check"]


def declare(library: Any, signatures: dict[str, tuple[Any, ...]]) -> Any:
    """``library`` (a ``ctypes.CDLL``, or a stand-in with its attributes) with each call of
    ``signatures`` given its parameters and an int result."""
    for name, params in signatures.items():
        function = getattr(library, name)
        function.argtypes, function.restype = list(params), ctypes.c_int
    return library


def open_declared(choice: tuple[str, ...], signatures: dict[str, tuple[Any, ...]]) -> Any:
    """The first of ``choice`` (sonames, newest first) that opens, ``libfiles.locate``'s copy,
    declared; OSError naming each file tried and why when none opens."""
    errors = []
    for soname in choice:
        try:
            return declare(ctypes.CDLL(libfiles.locate(soname)), signatures)
        except OSError as exc:
            errors.append(str(exc))
    raise OSError("; ".join(errors))


def check(status: int, call: str, names: dict[int, str], out_of_memory: int) -> None:
    """Raise DriverError (DriverOutOfMemory for ``out_of_memory``) naming ``call`` and the status's
    name in ``names``, unless ``status`` is 0 (success)."""
    if status:
        cls = DriverOutOfMemory if status == out_of_memory else DriverError
        raise cls(f"{call} failed: {names.get(status, f'status {status}')}")
