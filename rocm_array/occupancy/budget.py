"""The resource budget every kernel keeps on every target, checked by the compile check.

- No kernel uses scratch (private segment on AMD, a local stack frame on NVIDIA: spills, or
  arrays indexed at run time) unless ``SCRATCH`` lists it with its reason: scratch is memory
  traffic the kernel's own work never asked for.
- Kernels of the memory-bound families (``MEMORY_BOUND``) keep at least half the waves a SIMD
  of the target can hold: their speed is the bandwidth, and waves in flight are what hide its
  latency.
- No kernel holds fewer than ``MIN_WAVES`` waves a SIMD unless ``FEW_WAVES`` lists it with its
  reason: one wave a SIMD stalls on every load and barrier.
- No kernel is declared for larger blocks than its code allows (its launch bounds, or on AMD the
  1024 of none): such a launch fails.

A listed kernel that no longer breaks its rule is reported too, so the lists stay true.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..launch import template
from .limits import LIMITS
from .report import Row

__all__ = ["Waiver", "MEMORY_BOUND", "MIN_WAVES", "SCRATCH", "FEW_WAVES", "violations", "summary"]

#: The families whose kernels move memory with little arithmetic a byte: copies, elementwise
#: (eager and fused), reductions and scans, pooling, random draws.
MEMORY_BOUND = ("copy/copy.hip", "elementwise/elementwise.hip", "elementwise/fused.hip", "reduction/reduction.hip",
                "nn/pool.hip", "random/random.hip")
MIN_WAVES = 2


@dataclass(frozen=True)
class Waiver:
    """A kernel of ``path`` (a template's name, or the start of name expressions) allowed past a
    rule on ``targets`` (all when empty), for ``reason``."""

    path: str
    kernel: str
    reason: str
    targets: tuple[str, ...] = ()

    def covers(self, row: Row) -> bool:
        return (row.path == self.path and (template(row.name) == self.kernel or row.name.startswith(self.kernel))
                and (not self.targets or row.target in self.targets))


_CDNA, _GFX1030 = ("gfx90a", "gfx942"), ("gfx1030",)
_COMPLEX = ("complex functors: complex128 pow and complex64 expm1 need 129 to 133 VGPRs a lane, 3 waves a SIMD of 8 "
            "(at the 128 of 4 waves hiprtc spilled 2 to 10 of them to scratch); their arithmetic, not memory, is "
            "their time")
_BYTE_COLUMNS = ("the column reductions' vector path gives a thread 16 one-byte columns, so 16 accumulators: of "
                 "8 bytes (sums in int64), 16 (mean, argmax) or 24 (var, std): 136 to 161 VGPRs on AMD (3 waves a "
                 "SIMD of 8 on CDNA, 6 of 16 on gfx1030; at the 128 of 4 waves up to 100 spilled to scratch), 86 to "
                 "196 registers on sm_90. A vector narrower for wide accumulators would lift them on every target, "
                 "but changes sm_90's path: not done without timing it there")
_FUSED = ("a reduction of a fused expression computes the expression in its unrolled loop (4 vectors a thread): "
          "the examples' reach 133 to 158 VGPRs, 3 waves a SIMD on CDNA and 6 on gfx1030; a user's expression "
          "may need fewer or more")

#: Kernels that may use scratch, and why.
SCRATCH: tuple[Waiver, ...] = (
    Waiver("elementwise/elementwise.hip", "binary_tiles<pow_op, complex128",
           "complex128 pow in the transposing tiles of 1024 threads a block on CDNA, which leave a lane 128 VGPRs: "
           "6 to 10 spill (20 to 44 bytes); a compute-bound functor", _CDNA),
)
#: Kernels that may hold fewer waves a SIMD than the rules ask, and why.
FEW_WAVES: tuple[Waiver, ...] = (
    Waiver("linalg/small_gemm.hip", "small_gemm",
           "never launched on AMD: its plan (plugins/linalg/small_gemm.py) sends AMD's products to rocBLAS, since the "
           "kernel wins only with asynchronous copies (NVIDIA from sm_80); it holds both 64x64 operands in 34 KiB of "
           "LDS by design, one block a CDNA CU (0.5 to 1.75 waves a SIMD). Compiled for the check and for the "
           "simulator's test of its portable path", _CDNA),
    *(Waiver("reduction/reduction.hip", f"reduce_outer_vector<{t}", _BYTE_COLUMNS, _CDNA + _GFX1030)
      for t in ("int8_t", "uint8_t", "bool")),
    *(Waiver("elementwise/elementwise.hip", k, _COMPLEX, _CDNA)
      for k in ("binary_strided<pow_op, complex128", "binary_rows<pow_op, complex128",
                "unary_contiguous<expm1_op, complex64")),
    *(Waiver("reduction/reduction.hip", k, _FUSED, _CDNA + _GFX1030) for k in ("reduce_inner_of", "reduce_all_of")),
)


def _describe(row: Row) -> str:
    u = row.use
    nvidia = row.target.startswith("sm_")
    regs = f"{u.vgprs} registers" if nvidia else f"{u.vgprs} VGPRs ({u.agprs} AGPRs), {u.sgprs} SGPRs"
    spills = f", spills {u.vgpr_spills} VGPRs {u.sgpr_spills} SGPRs" if u.vgpr_spills or u.sgpr_spills else ""
    return (f"{row.target} {row.path}{' (generated)' if row.generated else ''} {row.name}: {row.waves:g} waves a SIMD "
            f"of {LIMITS[row.target].max_waves} (bound by {row.limiter}); {regs}, {u.lds} bytes "
            f"{'shared memory' if nvidia else 'LDS'} + {row.shared} dynamic, {u.scratch} bytes "
            f"{'stack' if nvidia else 'scratch'}{spills}, {row.threads} threads a block")


def _wanted(row: Row) -> float:
    """The fewest waves a SIMD the rules allow ``row``."""
    half = LIMITS[row.target].max_waves / 2 if row.path in MEMORY_BOUND else 0
    return max(MIN_WAVES, half)


def _scratch(row: Row) -> bool:
    return row.use.scratch > 0 or row.use.dynamic_stack


def violations(rows: Sequence[Row], scratch: Iterable[Waiver] = SCRATCH,
               few: Iterable[Waiver] = FEW_WAVES) -> list[str]:
    """A line for each kernel over the budget and each waiver no kernel needs (among the targets and
    sources of ``rows``)."""
    scratch, few = tuple(scratch), tuple(few)
    out = []
    for row in rows:
        bound = row.use.max_threads
        if bound and row.threads > bound:
            out.append(f"{_describe(row)}: declared for {row.threads} threads a block, its code allows {bound}: "
                       f"launches would fail (make the kernel's __launch_bounds__ the family's declared block)")
        if _scratch(row) and not any(w.covers(row) for w in scratch):
            out.append(f"{_describe(row)}: uses scratch: keep its arrays in registers (constant indices, fewer "
                       f"live values), or list it in budget.SCRATCH with the reason")
        if row.waves < _wanted(row) and not any(w.covers(row) for w in few):
            rule = "half the target's" if row.path in MEMORY_BOUND else f"the {MIN_WAVES}"
            out.append(f"{_describe(row)}: below {rule} ({_wanted(row):g}): fewer registers, LDS or threads a "
                       f"block, or list it in budget.FEW_WAVES with the reason")
    seen = {(r.path, r.target) for r in rows}
    for kind, waivers, needs in (("SCRATCH", scratch, _scratch), ("FEW_WAVES", few, lambda r: r.waves < _wanted(r))):
        for w in waivers:
            covered = [r for r in rows if w.covers(r)]
            if any((w.path, t) in seen for t in (w.targets or LIMITS)) and not any(needs(r) for r in covered):
                out.append(f"budget.{kind} lists {w.path} {w.kernel}"
                           f"{' on ' + ', '.join(w.targets) if w.targets else ''}, which no longer needs it: remove it")
    return out


def summary(rows: Iterable[Row], target: str) -> str:
    """One line of a target's rows: kernels, those with scratch, and the waves a SIMD they hold."""
    mine = [r for r in rows if r.target == target]
    if not mine:
        return "no kernels read"
    low = min(mine, key=lambda r: r.waves)
    return (f"{len(mine)} kernels, {sum(map(_scratch, mine))} with scratch, waves a SIMD: min {low.waves:g} "
            f"({low.name}), median {statistics.median(r.waves for r in mine):g} of {LIMITS[target].max_waves}")
