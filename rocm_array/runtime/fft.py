"""The vendor FFT library of a GPU, behind one neutral protocol.

``fft_nvidia`` (cuFFT through ctypes) and ``fft_amd`` (hipFFT through hip-python)
implement ``Fft``; they are the only modules that call those libraries.
``vendor.library("fft", rt)`` gives the one ``Fft`` of a runtime, bound to its stream and kept for the life of the process. Both share ``PlannedFft``: plans
are made once per problem (kind, precision, lengths, batch) with the 64-bit
API and automatic allocation off, kept in a bounded cache, and run with one
work area of the runtime's allocator, grown as a plan asks and shared by every
plan (the work on the stream is ordered, so they never use it at once).

Conventions of every call: data is contiguous, ``batch`` transforms one after
another, each row-major over ``lengths`` (the logical lengths: a real-to-complex
transform's complex side has ``lengths[-1] // 2 + 1`` points on its last axis);
pointers are device addresses as ints; transforms are unnormalized (forward:
exponent -1, inverse: +1). A complex-to-real transform may overwrite its input.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..dtypes import DType
    from .buffer import DeviceBuffer
    from .gpu import GpuRuntime

__all__ = ["Fft", "Problem", "PlannedFft", "MAX_RANK", "KINDS"]

#: The most axes one plan transforms (cuFFT's and hipFFT's limit); more are several passes.
MAX_RANK = 3
#: complex-to-complex, real-to-complex (always forward), complex-to-real (always inverse).
KINDS = ("c2c", "r2c", "c2r")
#: How many plans a library keeps (each holds device memory for its twiddle factors): a bound on that
#: memory, not a measured optimum; CuPy's plan cache keeps 16 by default.
PLAN_CACHE = 64


class Fft(Protocol):
    """cuFFT or hipFFT of one device, bound to its runtime's stream."""

    def execute(self, kind: str, dtype: DType, lengths: tuple[int, ...], batch: int, src: int, dst: int,
                inverse: bool) -> None:
        """``batch`` transforms of ``kind`` over ``lengths`` (1 to MAX_RANK axes) from ``src`` to ``dst``
        (distinct buffers); ``dtype`` is the complex dtype of the precision (complex64, complex128)."""


@dataclass(frozen=True)
class Problem:
    """What a plan is made for; its packed layout follows from the lengths."""

    kind: str
    double: bool
    lengths: tuple[int, ...]
    batch: int

    def embeds(self) -> tuple[tuple[int, ...], int, tuple[int, ...], int]:
        """(inembed, idist, onembed, odist) of the contiguous input and output (strides 1)."""
        half = (*self.lengths[:-1], self.lengths[-1] // 2 + 1)
        inner, outer = {"c2c": (self.lengths, self.lengths), "r2c": (self.lengths, half),
                        "c2r": (half, self.lengths)}[self.kind]
        return inner, math.prod(inner), outer, math.prod(outer)


class PlannedFft(ABC):
    """The plan cache and shared work area of both platforms; a platform module writes the calls."""

    def __init__(self, rt: GpuRuntime) -> None:
        self._rt = rt
        self._plans: OrderedDict[Problem, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._work: DeviceBuffer = rt.allocate(0)

    def activate(self) -> None:
        self._rt.driver.activate()

    # -- the platform's calls ----------------------------------------------------------------
    @abstractmethod
    def _make(self, problem: Problem) -> tuple[Any, int]:
        """A new plan bound to the stream, without a work area of its own: (handle, work bytes)."""

    @abstractmethod
    def _run(self, plan: Any, problem: Problem, work: int, src: int, dst: int, inverse: bool) -> None:
        """Set ``plan``'s work area to ``work`` and queue its transform."""

    @abstractmethod
    def _destroy(self, plan: Any) -> None:
        """Free the plan."""

    # -- shared ------------------------------------------------------------------------------
    def _plan(self, problem: Problem) -> tuple[Any, int]:
        with self._lock:
            found = self._plans.get(problem)
            if found is not None:
                self._plans.move_to_end(problem)
                return found
            found = self._plans[problem] = self._make(problem)
            if len(self._plans) > PLAN_CACHE:
                _, (old, _) = self._plans.popitem(last=False)
                self._rt.driver.synchronize()  # its queued transforms read its twiddle factors
                self._destroy(old)
            return found

    def execute(self, kind: str, dtype: DType, lengths: tuple[int, ...], batch: int, src: int, dst: int,
                inverse: bool) -> None:
        self.activate()
        problem = Problem(kind, dtype.itemsize == 16, tuple(lengths), batch)
        plan, work_bytes = self._plan(problem)
        if work_bytes > self._work.nbytes:
            # The old area goes back to the stream-ordered pool after the work queued on it.
            self._work = self._rt.allocate(work_bytes)
        self._run(plan, problem, self._work.ptr, src, dst, inverse)
