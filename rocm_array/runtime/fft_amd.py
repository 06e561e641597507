"""``Fft`` on the ``amd`` platform: hipFFT (over rocFFT) through hip-python.

Kept symmetric with ``fft_nvidia.py``. hip-python returns ``(status, *values)``
like the driver bindings, so the driver's status check is reused; it takes the
length and embedding arrays as buffers (int64 NumPy arrays for the 64-bit API)
and the plan type as its ``hipfftType_t`` enum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from hip import hipfft

from .bindings import checker
from .fft import Fft, PlannedFft, Problem

if TYPE_CHECKING:
    from .gpu import GpuRuntime

__all__ = ["HipFft", "open_library"]

_check = checker(hipfft.hipfftResult_t.HIPFFT_SUCCESS, hipfft.hipfftResult_t.HIPFFT_ALLOC_FAILED)
_T = hipfft.hipfftType_t
#: (kind, double precision) -> (plan type, exec function name, takes a direction).
_EXEC = {("c2c", False): (_T.HIPFFT_C2C, "hipfftExecC2C", True), ("c2c", True): (_T.HIPFFT_Z2Z, "hipfftExecZ2Z", True),
         ("r2c", False): (_T.HIPFFT_R2C, "hipfftExecR2C", False), ("r2c", True): (_T.HIPFFT_D2Z, "hipfftExecD2Z", False),
         ("c2r", False): (_T.HIPFFT_C2R, "hipfftExecC2R", False), ("c2r", True): (_T.HIPFFT_Z2D, "hipfftExecZ2D", False)}


def _int64s(values: tuple[int, ...]) -> np.ndarray:
    return np.array(values, np.int64)


class HipFft(PlannedFft):
    """hipFFT plans of one device, bound to its runtime's stream."""

    def _make(self, problem: Problem) -> tuple[Any, int]:
        plan = _check(hipfft.hipfftCreate(), "hipfftCreate")
        try:
            _check(hipfft.hipfftSetStream(plan, self._rt.driver.stream), "hipfftSetStream")
            _check(hipfft.hipfftSetAutoAllocation(plan, 0), "hipfftSetAutoAllocation")
            inembed, idist, onembed, odist = problem.embeds()
            work = _check(hipfft.hipfftMakePlanMany64(
                plan, len(problem.lengths), _int64s(problem.lengths), _int64s(inembed), 1, idist,
                _int64s(onembed), 1, odist, _EXEC[problem.kind, problem.double][0], problem.batch),
                "hipfftMakePlanMany64")
        except BaseException:
            hipfft.hipfftDestroy(plan)
            raise
        return plan, int(work)

    def _run(self, plan: Any, problem: Problem, work: int, src: int, dst: int, inverse: bool) -> None:
        _check(hipfft.hipfftSetWorkArea(plan, work), "hipfftSetWorkArea")
        _, name, directed = _EXEC[problem.kind, problem.double]
        direction = (hipfft.HIPFFT_BACKWARD if inverse else hipfft.HIPFFT_FORWARD,) if directed else ()
        _check(getattr(hipfft, name)(plan, src, dst, *direction), name)

    def _destroy(self, plan: Any) -> None:
        _check(hipfft.hipfftDestroy(plan), "hipfftDestroy")


def open_library(rt: GpuRuntime) -> Fft:  # (mypy checks HipFft against the protocol)
    return HipFft(rt)
