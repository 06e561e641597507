"""``Fft`` on the ``nvidia`` platform: cuFFT through nvmath-python's low-level bindings.

Kept symmetric with ``fft_amd.py``. Plans are made with ``cufftMakePlanMany64``
after ``cufftSetAutoAllocation(0)``, so cuFFT allocates no work area of its own:
``cufftSetWorkArea`` hands it the shared one from the runtime's allocator before
each run. nvmath's bindings raise ``cuFFTError`` on a failed call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING


from .fft import Fft, PlannedFft, Problem
from .nvmath_bindings import load as bindings

(cufft,) = bindings("bindings.cufft")  # without importing nvmath itself (see nvmath_bindings)

if TYPE_CHECKING:
    from .gpu import GpuRuntime

__all__ = ["Cufft", "open_library"]

_T = cufft.Type
#: (kind, double precision) -> (plan type, exec function, takes a direction).
_EXEC = {("c2c", False): (_T.C2C, cufft.exec_c2c, True), ("c2c", True): (_T.Z2Z, cufft.exec_z2z, True),
         ("r2c", False): (_T.R2C, cufft.exec_r2c, False), ("r2c", True): (_T.D2Z, cufft.exec_d2z, False),
         ("c2r", False): (_T.C2R, cufft.exec_c2r, False), ("c2r", True): (_T.Z2D, cufft.exec_z2d, False)}
_FORWARD, _INVERSE = -1, 1  # CUFFT_FORWARD, CUFFT_INVERSE


class Cufft(PlannedFft):
    """cuFFT plans of one device, bound to its runtime's stream."""

    def _make(self, problem: Problem) -> tuple[int, int]:
        plan = cufft.create()
        try:
            cufft.set_stream(plan, self._rt.driver.stream)
            cufft.set_auto_allocation(plan, 0)
            inembed, idist, onembed, odist = problem.embeds()
            work = cufft.make_plan_many64(plan, len(problem.lengths), problem.lengths, inembed, 1, idist,
                                          onembed, 1, odist, _EXEC[problem.kind, problem.double][0],
                                          problem.batch)
        except BaseException:
            cufft.destroy(plan)
            raise
        return plan, int(work)

    def _run(self, plan: int, problem: Problem, work: int, src: int, dst: int, inverse: bool) -> None:
        cufft.set_work_area(plan, work)
        _, run, directed = _EXEC[problem.kind, problem.double]
        direction = (_INVERSE if inverse else _FORWARD,) if directed else ()
        run(plan, src, dst, *direction)

    def _destroy(self, plan: int) -> None:
        cufft.destroy(plan)


def open_library(rt: GpuRuntime) -> Fft:  # (mypy checks Cufft against the protocol)
    return Cufft(rt)
