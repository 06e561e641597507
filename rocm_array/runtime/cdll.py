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
import functools
from typing import Any, Callable

from . import libfiles
from .protocol import DriverError, DriverOutOfMemory

__all__ = ["Library", "opener"]

Signatures = dict[str, tuple[Any, ...]]


class Library:
    """A vendor library's declared calls over ``handle`` (a ``ctypes.CDLL``, or a stand-in with its
    attributes). ``call`` runs one and raises on a failed status: DriverError naming the call and the
    status's name in ``names`` (DriverOutOfMemory for ``out_of_memory``)."""

    def __init__(self, handle: Any, signatures: Signatures, names: dict[int, str], out_of_memory: int) -> None:
        for name, params in signatures.items():
            function = getattr(handle, name)
            function.argtypes, function.restype = list(params), ctypes.c_int
        self.handle = handle
        self._names, self._out_of_memory = names, out_of_memory

    def call(self, name: str, *args: Any) -> None:
        status = getattr(self.handle, name)(*args)
        if status:
            cls = DriverOutOfMemory if status == self._out_of_memory else DriverError
            raise cls(f"{name} failed: {self._names.get(status, f'status {status}')}")


def _first(choice: tuple[str, ...]) -> Any:
    """The ``ctypes.CDLL`` of the first of ``choice`` (sonames, newest first) that opens,
    ``libfiles.locate``'s copy; OSError naming each file tried and why when none opens."""
    errors = []
    for soname in choice:
        try:
            return ctypes.CDLL(libfiles.locate(soname))
        except OSError as exc:
            errors.append(str(exc))
    raise OSError("; ".join(errors))


def opener(choice: tuple[str, ...], signatures: Signatures, names: dict[int, str],
           out_of_memory: int) -> Callable[..., Library]:
    """``open(handle=None)``: the Library over ``handle`` (a stand-in, for tests), else the process's
    one Library over the first of ``choice`` that opens (opened at the first call)."""
    installed = functools.cache(lambda: Library(_first(choice), signatures, names, out_of_memory))

    def open_library(handle: Any = None) -> Library:
        return Library(handle, signatures, names, out_of_memory) if handle is not None else installed()

    return open_library
