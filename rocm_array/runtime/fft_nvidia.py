"""``Fft`` on the ``nvidia`` platform: cuFFT called through ``ctypes`` (``cdll``: why), on the file
the preload mapped.

Kept symmetric with ``fft_amd.py``. Plans are made with ``cufftMakePlanMany64``
after ``cufftSetAutoAllocation(0)``, so cuFFT allocates no work area of its own:
``cufftSetWorkArea`` hands it the shared one from the runtime's allocator before
each run. A call that fails raises ``DriverError`` naming the call and cuFFT's status
(``DriverOutOfMemory`` for ``CUFFT_ALLOC_FAILED``). ``SIGNATURES``, ``STATUS`` and ``TYPES``
are ``cufft.h``'s, and tests/test_bindings.py holds them to the installed header.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

from . import cdll, libfiles
from .fft import Fft, PlannedFft, Problem

if TYPE_CHECKING:
    from .gpu import GpuRuntime

__all__ = ["Cufft", "open_library", "SIGNATURES", "STATUS", "TYPES", "open_cufft"]

_int, _i64, _ptr = ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p
_out_int, _out_i64, _out_size = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_longlong), \
    ctypes.POINTER(ctypes.c_size_t)
#: Each call's parameters (every call returns a cufftResult, an int). cufftHandle is an int;
#: device pointers and streams are addresses.
SIGNATURES: dict[str, tuple[Any, ...]] = {
    "cufftGetVersion": (_out_int,),
    "cufftCreate": (_out_int,),
    "cufftSetStream": (_int, _ptr),
    "cufftSetAutoAllocation": (_int, _int),
    "cufftMakePlanMany64": (_int, _int, _out_i64, _out_i64, _i64, _i64, _out_i64, _i64, _i64, _int, _i64, _out_size),
    "cufftSetWorkArea": (_int, _ptr),
    "cufftExecC2C": (_int, _ptr, _ptr, _int),
    "cufftExecZ2Z": (_int, _ptr, _ptr, _int),
    "cufftExecR2C": (_int, _ptr, _ptr),
    "cufftExecD2Z": (_int, _ptr, _ptr),
    "cufftExecC2R": (_int, _ptr, _ptr),
    "cufftExecZ2D": (_int, _ptr, _ptr),
    "cufftDestroy": (_int,),
}
#: cufftResult's values, as cufft.h names them (the ones it leaves out are retired).
STATUS = {0x0: "CUFFT_SUCCESS", 0x1: "CUFFT_INVALID_PLAN", 0x2: "CUFFT_ALLOC_FAILED", 0x3: "CUFFT_INVALID_TYPE",
          0x4: "CUFFT_INVALID_VALUE", 0x5: "CUFFT_INTERNAL_ERROR", 0x6: "CUFFT_EXEC_FAILED",
          0x7: "CUFFT_SETUP_FAILED", 0x8: "CUFFT_INVALID_SIZE", 0x9: "CUFFT_UNALIGNED_DATA",
          0xB: "CUFFT_INVALID_DEVICE", 0xD: "CUFFT_NO_WORKSPACE", 0xE: "CUFFT_NOT_IMPLEMENTED",
          0x10: "CUFFT_NOT_SUPPORTED", 0x11: "CUFFT_MISSING_DEPENDENCY", 0x12: "CUFFT_NVRTC_FAILURE",
          0x13: "CUFFT_NVJITLINK_FAILURE", 0x14: "CUFFT_NVSHMEM_FAILURE"}
_ALLOC_FAILED = 0x2
#: cufftType's values, as cufft.h names them.
TYPES = {"CUFFT_R2C": 0x2A, "CUFFT_C2R": 0x2C, "CUFFT_C2C": 0x29, "CUFFT_D2Z": 0x6A, "CUFFT_Z2D": 0x6C,
         "CUFFT_Z2Z": 0x69}
#: (kind, double precision) -> (plan type, exec call, takes a direction).
_EXEC = {("c2c", False): ("CUFFT_C2C", "cufftExecC2C", True), ("c2c", True): ("CUFFT_Z2Z", "cufftExecZ2Z", True),
         ("r2c", False): ("CUFFT_R2C", "cufftExecR2C", False), ("r2c", True): ("CUFFT_D2Z", "cufftExecD2Z", False),
         ("c2r", False): ("CUFFT_C2R", "cufftExecC2R", False), ("c2r", True): ("CUFFT_Z2D", "cufftExecZ2D", False)}
_FORWARD, _INVERSE = -1, 1  # CUFFT_FORWARD, CUFFT_INVERSE


#: cuFFT's calls (``open_cufft()``; a stand-in for the library file in tests).
open_cufft = cdll.opener(libfiles.CUFFT, SIGNATURES, STATUS, _ALLOC_FAILED)


def _dims(lengths: tuple[int, ...]) -> Any:
    """A ``long long[]`` of ``lengths``."""
    return (ctypes.c_longlong * len(lengths))(*lengths)


class Cufft(PlannedFft):
    """cuFFT plans of one device, bound to its runtime's stream."""

    def __init__(self, rt: GpuRuntime, library: Any = None) -> None:
        super().__init__(rt)
        self._lib = open_cufft(library)

    def _make(self, problem: Problem) -> tuple[int, int]:
        handle = ctypes.c_int()
        self._lib.call("cufftCreate", ctypes.byref(handle))
        plan = handle.value
        try:
            self._lib.call("cufftSetStream", plan, self._rt.driver.stream)
            self._lib.call("cufftSetAutoAllocation", plan, 0)
            inembed, idist, onembed, odist = problem.embeds()
            rank, work = len(problem.lengths), ctypes.c_size_t()
            self._lib.call("cufftMakePlanMany64", plan, rank, _dims(problem.lengths), _dims(inembed), 1, idist,
                           _dims(onembed), 1, odist, TYPES[_EXEC[problem.kind, problem.double][0]], problem.batch,
                           ctypes.byref(work))
        except BaseException:
            self._lib.handle.cufftDestroy(plan)  # (unchecked: the error in flight is the one to see)
            raise
        return plan, work.value

    def _run(self, plan: int, problem: Problem, work: int, src: int, dst: int, inverse: bool) -> None:
        self._lib.call("cufftSetWorkArea", plan, work)
        _, call, directed = _EXEC[problem.kind, problem.double]
        self._lib.call(call, plan, src, dst, *((_INVERSE if inverse else _FORWARD,) if directed else ()))

    def _destroy(self, plan: int) -> None:
        self._lib.call("cufftDestroy", plan)


def open_library(rt: GpuRuntime) -> Fft:  # (mypy checks Cufft against the protocol)
    return Cufft(rt)
