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
from fnmatch import fnmatchcase
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
    """Kernels of ``path`` allowed past a rule on ``targets`` (all when empty), for ``reason``:
    those of the template ``kernel``, or whose name expressions match it as a shell pattern
    (``reduce_outer_vector<int8_t*``, ``*<sin_op, *``)."""

    path: str
    kernel: str
    reason: str
    targets: tuple[str, ...] = ()

    def covers(self, row: Row) -> bool:
        return (row.path == self.path and (template(row.name) == self.kernel or fnmatchcase(row.name, self.kernel))
                and (not self.targets or row.target in self.targets))


_CDNA, _GFX1030, _SM90 = ("gfx90a", "gfx942"), ("gfx1030",), ("sm_90",)
_EW, _RED = "elementwise/elementwise.hip", "reduction/reduction.hip"
#: sm_90's kernels keep the values measured on H100s and H200s: where they hold fewer warps than the
#: rules ask, or a stack, they are listed, not changed (a change is for whoever can time it there).
_MEASURED = "sm_90's code as measured on H100/H200, not changed here"
_COMPLEX = ("complex functors: complex128 pow and complex64 expm1 need 129 to 133 VGPRs a lane, 3 waves a SIMD of 8 "
            "(at the 128 of 4 waves hiprtc spilled 2 to 10 of them to scratch); their arithmetic, not memory, is "
            "their time")
_BYTE_COLUMNS = ("the column reductions' vector path gives a thread 16 bytes of columns, so 16 accumulators of "
                 "one-byte inputs: of 8 bytes (sums in int64), 16 (mean, argmax) or 24 (var, std): 136 to 161 VGPRs "
                 "on AMD (3 waves a SIMD of 8 on CDNA, 6 of 16 on gfx1030; at the 128 of 4 waves up to 100 spilled "
                 "to scratch); on sm_90, 66 to 196 registers wherever inputs of 1 to 4 bytes meet wider "
                 "accumulators, 2 to 6 warps a sub-partition. A vector narrower for wide accumulators would lift them on every target, but "
                 "changes sm_90's path: " + _MEASURED)
_ROWS = ("a row kernel (rocm_array_plugins/elementwise/rows.py) holds a thread's elements of its row in registers up "
         "to rows.CACHE_REGISTERS (16) and keeps four accumulators a stage: the examples take 66 to 76 registers on "
         "sm_90, 4 to 6 warps a sub-partition; 16 was the better of 16 and 32 on an H200 (8192-float32 softmax 245 "
         "against 321 us). AMD's examples are within the rules")
_TRIG = ("CUDA's sin, cos and tan reduce huge arguments (Payne-Hanek) through a local array: 32 to 40 bytes of "
         "stack, touched only for arguments far past 2^16; the complex functions call them. " + _MEASURED)

#: Kernels that may use scratch, and why.
SCRATCH: tuple[Waiver, ...] = (
    Waiver(_EW, "binary_tiles<pow_op, complex128*",
           "complex128 pow in the transposing tiles of 1024 threads a block on CDNA, which leave a lane 128 VGPRs: "
           "6 to 10 spill (20 to 44 bytes); a compute-bound functor", _CDNA),
    *(Waiver(_EW, pattern, _TRIG, _SM90) for pattern in (
        "unary_*<sin_op, *", "unary_*<cos_op, *", "unary_*<tan_op, *", "unary_*<*_op, complex*",
        "binary_*<pow_op, complex*")),
    Waiver(_EW, "binary_tiles<*", "8 to 16 bytes of stack in the transposing tiles of float remainder and complex128 "
           "division by a scalar (ptxas's choice). " + _MEASURED, _SM90),
    Waiver("reduction/sort.hip", "radix_onesweep<*, false>",
           "the onesweep pass's last, partial tile (one block a pass): 8 bytes of stack under the pass's launch "
           "bounds (3 or 4 blocks an SM: 80 or 64 registers). " + _MEASURED, _SM90),
    *(Waiver("nn/rows.hip", k, "the rows kernels' launch bounds of 1024 threads leave a thread 64 registers on sm_90: "
             "rows held in registers (128 bytes in 16 loads, chosen on an H200) spill 8 to 280 bytes to local memory "
             "for 16-byte vectors of 16-bit floats and for float64 (found by this report). " + _MEASURED, _SM90)
      for k in ("norm_rows", "softmax_rows")),
    Waiver(_RED, "scan_tiles<complex128*", "the one-pass scan's launch bounds (5 blocks of 128 threads an SM: 96 "
           "registers) hold a chunk of a tile's loads in flight and the look-back's shuffles of 16-byte "
           "accumulators: complex128 scans and nonzero of complex128 arrays keep 16 to 80 bytes of stack on sm_90 "
           "(every other scan none)", _SM90),
    Waiver(_RED, "scan_tiles<complex128*", "the one-pass scan's 16-byte accumulators take the fenced slot path (value, "
           "fence, flag: no 16-byte word is one access on AMD): complex128 sums and products keep 56 bytes of scratch "
           "on every AMD target (69 to 78 VGPRs); not timed on AMD", _CDNA + _GFX1030 + ("gfx1100",)),
)
#: Kernels that may hold fewer waves a SIMD than the rules ask, and why.
FEW_WAVES: tuple[Waiver, ...] = (
    Waiver("linalg/small_gemm.hip", "small_gemm",
           "never launched on AMD: its plan (rocm_array_plugins/linalg/small_gemm.py) sends AMD's products to rocBLAS, since the "
           "kernel wins only with asynchronous copies (NVIDIA from sm_80); it holds both 64x64 operands in 34 KiB of "
           "LDS by design, one block a CDNA CU (0.5 to 1.75 waves a SIMD). Compiled for the check and for the "
           "simulator's test of its portable path", _CDNA),
    *(Waiver(_RED, f"reduce_outer_vector<{t}*", _BYTE_COLUMNS, _CDNA + _GFX1030) for t in ("int8_t", "uint8_t")),
    Waiver(_RED, "reduce_outer_vector<bool*", _BYTE_COLUMNS, ("gfx942",)),
    Waiver(_RED, "reduce_outer_vector", _BYTE_COLUMNS, _SM90),
    *(Waiver(_EW, k, _COMPLEX, _CDNA)
      for k in ("binary_strided<pow_op, complex128*", "binary_rows<pow_op, complex128*",
                "unary_contiguous<expm1_op, complex64*")),
    Waiver(_RED, "fused_rows", _ROWS, _SM90),
    Waiver(_RED, "scan_tiles", "the one-pass scan's tiles of 33 KiB (128 threads of 64 four-byte elements) take a "
           "look-back each, and a block waits for it at a barrier: bigger tiles paid more than warps (on an H200, "
           "cumulative_sum of 2^26 float32 / 2^24 float64 against PyTorch: 0.71 / 0.81 with 8 KiB tiles at 8 warps a "
           "sub-partition, 0.97 / 1.02 with these at 5, 1.16 / 1.10 with the loops over a thread's items unrolled by 8, "
           "rocm_array_plugins/reduction/gpu.py)", _SM90),
    Waiver(_RED, "*welford_op*", "var and std (Welford: a count and two floats or doubles a thread) take 66 to 166 "
           "registers on sm_90 (the column reductions of 1-byte integers the most): 2 to 6 warps a sub-partition. "
           + _MEASURED, _SM90),
    Waiver(_RED, "reduce_inner_of<*double, double, ra_red::welford_op*", "var and std of a fused float64 expression "
           "fold a thread's 8 doubles as one run (welford_op::RUN: two passes over registers and one division, where "
           "one division an element took 30 instructions an element on sm_90) in 129 VGPRs on gfx1030, one past 8 "
           "waves: 6 waves a SIMD of 16; not timed on AMD", _GFX1030),
    Waiver(_RED, "reduce_inner*<*value_index_op*", "argmax and argmin of 2- and 8-byte integers take 71 and 72 registers "
           "on sm_90, and of a fused float32 expression 74: 6 warps a sub-partition. " + _MEASURED, _SM90),
    *(Waiver(_EW, k, "these functors take 67 to 117 registers on sm_90 (bfloat16 division, int8 pow and floor "
             "division, complex64 asin and asinh, float64 atan; complex128 in the transposing tiles with their 33 KiB "
             "of shared memory): 4 or 6 warps a sub-partition. " + _MEASURED, _SM90)
      for k in ("*<div_op, bfloat16*", "*<pow_op, int8_t*", "*<floor_div_op, int8_t*", "unary_contiguous<asin_op, *",
                "unary_contiguous<asinh_op, *", "unary_contiguous<atan_op, double*", "binary_tiles<*complex128*")),
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
            # Judged a target at a time, among the targets the rows hold (a report of AMD's targets
            # says nothing of a waiver's sm_90).
            needed = {r.target for r in rows if w.covers(r) and needs(r)}
            stale = [t for t in (w.targets or LIMITS) if (w.path, t) in seen and t not in needed]
            if stale:
                fix = ("remove it, or name the targets that need it" if not w.targets
                       else "remove it" if len(stale) == len(w.targets) else "remove those targets from it")
                out.append(f"budget.{kind} lists {w.path} {w.kernel}{'' if w.targets else ' (every target)'}: no kernel "
                           f"on {', '.join(stale)} needs it: {fix}")
    return out


def summary(rows: Iterable[Row], target: str) -> str:
    """One line of a target's rows: kernels, those with scratch, and the waves a SIMD they hold."""
    mine = [r for r in rows if r.target == target]
    if not mine:
        return "no kernels read"
    low = min(mine, key=lambda r: r.waves)
    return (f"{len(mine)} kernels, {sum(map(_scratch, mine))} with scratch, waves a SIMD: min {low.waves:g} "
            f"({low.name}), median {statistics.median(r.waves for r in mine):g} of {LIMITS[target].max_waves}")
