"""The gpu backs of the reductions, scans, nonzero and diff: launches of ``rocm_array_kernels/reduction/reduction.hip``.

Reductions. After merging dimensions, the kept axes and the reduced axes are one
geometry each. When the reduced elements of one output are nearer each other in
memory than neighbouring outputs are, ``reduce_inner`` gives each output a block
(vector loads along a contiguous innermost axis; ``reduce_inner_strided`` otherwise);
else ``reduce_outer`` gives each output column a thread (coalesced loads across a
wave; ``reduce_outer_vector``: 16 bytes of neighbouring columns a thread). Either cuts
long reductions into chunks, whose accumulators a second launch combines
(``reduce_partial_rows`` or ``_columns``: two passes; every row's functors, Welford and
argmax pairs included, work alike). A full reduction of contiguous elements is one launch,
``reduce_all``: the last block to finish (an atomic counter) folds the partials as the second
pass would, so the bits are the same. Each layout and pass is a kernel of its own, so a first
call compiles only what it runs; a two-pass call compiles both at once.

Scans (cumulative_sum, cumulative_prod, nonzero's positions, unique's groups) are one launch of
``scan_tiles`` over contiguous rows: one pass with decoupled look-back, its per-tile state kept by
the device and marked by each launch with its own number, so nothing clears it between launches
(``_ScanState``); rows of one tile, or enough rows to fill the GPU (``_SCAN_ROWS_PER_CU``), a block
whole rows, with no look-back and no state.

Kernels are instantiated per (input, compute, output) dtype triple a row uses by
default, plus (d, accumulator(d), d) for the rows whose ``dtype=`` may ask for
another result: such a call casts the input to the result dtype first.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, cast

from rocm_array import dtypes, fusion, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, PerTarget, address, grid_1d, i64, kept, ptr
from rocm_array.runtime.compiler import kernel_source
from rocm_array.runtime.launcher import Launcher
from rocm_array.runtime.buffer import LazyBuffer
from rocm_array.runtime.layout import (MAX_DIMS, MAX_GRID_X, MAX_GRID_Y, geometry, geometry_struct, merge_dims,
                                      vector_width)
from rocm_array.views import moved_back, moved_last
from rocm_array_plugins.elementwise import own as elementwise

from . import backs
from .front_cumulative import SCANS
from .front_reduction import RESULT_RULES, accumulation_dtype, accumulator, reduced_shape
from .table import BY_NAME, REDUCTIONS

if TYPE_CHECKING:
    from rocm_array.devices import Device

    from .front_cumulative import Scan
    from .front_reduction import Reduction

__all__ = ["REDUCTION", "kernel_sources", "reduce", "scan", "scan_rows", "nonzero", "diff", "read_scalar"]

_PARTIAL_OUT = 2  # the first passes' flag: write accumulators, not finalized values
#: scan_tiles (one pass, decoupled look-back): threads, and elements a thread of an accumulator of up to
#: 4 bytes (RaScanItems in reduction.hip: 8-byte ones get half, 16-byte a quarter, so a tile is the same
#: bytes of shared memory for every dtype). NVIDIA: 128 threads of 64, staged through shared memory 16
#: at a time (RA_SCAN_CHUNK). A tile's look-back, and the block's wait for it at a barrier, cost more
#: than its reads and writes (see _SCAN_SM_THREADS), so bigger tiles pay: on an H200, PyTorch's time over
#: ours for cumulative_sum of 2^26 float32 / 2^24 float64 at 128x16 (8 KiB tiles, before) 0.71 / 0.81;
#: 128x32 0.92 / 0.74; 256x32 0.95 / 0.74; 128x64 at 768 threads an SM 0.92-0.97 / 0.92-0.95; and at 640
#: 0.97 / 1.02 (int64 1.02, cumulative_prod of float64 1.03; .diag/scan_big.py). 4096 rows of 4096 float32,
#: half a tile each, slowed from 42.6 to 60.7 us (PyTorch 179). 48 items a thread spill on sm_90.
#: AMD: not timed; 256 threads of 8 (a CDNA CU's 64 KiB of LDS holds 7 such blocks of 4-byte
#: accumulators, an RDNA WGP's 128 KiB 14).
_SCAN_BLOCK, _SCAN_ITEMS = PerTarget(nvidia=128, cdna=256, rdna=256), PerTarget(nvidia=64, cdna=8, rdna=8)
#: NVIDIA: the threads an SM that scan_tiles's launch bounds plan registers for: 5 blocks of 33 KiB tiles
#: (shared memory would hold 6), 96 registers a thread. At 768 (85 registers) float64's tile spilled
#: nothing and took 0.92-0.95 of PyTorch's time; at 1024 (64) it spilled 72 bytes, 0.83. With 8 KiB
#: tiles: 0.72 / 0.81 at 1024; 0.57 / 0.55 at 1536 (40 registers); 0.44 / 0.46 at 2048 (32 registers).
#: Where the time went at 128x16 (.diag/scan_diag.py, 2^26 float32): 155 us with neither look-back
#: nor tile counter (wrong sums), 237 without the look-back, 314 without the counter, 294-303 with both.
_SCAN_SM_THREADS = 640
#: How far scan_tiles unrolls the loops over a thread's items in shared memory (its run's sum, its
#: scan, its writes). On an H200, PyTorch's time over ours for cumulative_sum of 2^26 float32 / 2^24
#: float64, unrolled whole (64 on NVIDIA): 1.011 and 1.013 / 1.067 and 1.068 (two processes); by 16:
#: 1.163 / 1.098; by 8: 1.156 / 1.097; at 512 threads an SM, whole 1.008 / 1.041 and by 16 1.159 /
#: 1.101; at 768 by 8 1.156 / 1.117 (.diag/scan_var.py). By 8, not 16: a cold first scan compiles
#: it, and NVRTC took 1,129 ms for scan_tiles<float> by 8, 1,365 by 16 (reduce_all<float> 609; medians
#: of four, on a busy 2-core workstation: .diag/nvrtc_ab.py). AMD's 8 items a thread unroll whole.
_SCAN_UNROLL = 8
#: Rows of several tiles, this many a compute unit or more, are scanned a block a row, with no look-back
#: (no state, no polling): chosen as twice the blocks an SM that scan_tiles's launch bounds planned for
#: on NVIDIA with 8 KiB tiles (8), so each block takes two rows or more and an uneven last round idles at
#: most a third of the GPU. (4096, 4096) float32 along the last axis (two such tiles a row, 4096 rows:
#: past 132 SMs x 16) took 86.4 us so on an H200 against 147.9 by look-back; PyTorch 183.2 and 188.8.
#: Not timed again with the 33 KiB tiles (5 blocks an SM).
_SCAN_ROWS_PER_CU = 16
#: Where the look-back's slots start in its state: the two tile counters (used in turn) have their own
#: 128-byte cache line, which every block's atomic takes, apart from the slots the look-backs poll.
_SCAN_SLOTS_AT = 128
_ACC_BYTES = 32  # room for the largest accumulator (Welford's count, mean, m2 in double: 24)
#: The column reductions' blocks (a wave wide, BLOCK // wave rows of threads) combine their rows of
#: accumulators through this much dynamic shared memory.
_OUTER_SHARED = BLOCK * _ACC_BYTES
REDUCTION = Family("reduction/reduction.hip", {
    "RA_PARTIAL_OUT": _PARTIAL_OUT, "RA_SCAN_BLOCK": _SCAN_BLOCK, "RA_SCAN_ITEMS": _SCAN_ITEMS,
    "RA_SCAN_SM_THREADS": _SCAN_SM_THREADS, "RA_SCAN_UNROLL": _SCAN_UNROLL, "RA_BLOCK": BLOCK},
    threads={"scan_tiles": "RA_SCAN_BLOCK"},
    shared=dict.fromkeys(("reduce_outer", "reduce_outer_vector", "reduce_partial_columns"), _OUTER_SHARED))
#: Blocks a reduction aims for, per compute unit. Smaller chunks even out the blocks' finishing times:
#: on an H200, a sum of 2^28 float32 took 259, 252, 250, 249 and 260 us at 8, 16, 32, 64 and 128
#: (CuPy 242); a 16384^2 sum over axis 0 265, 258, 257, 255 and 256 us; over axis 1 240 us up to 64
#: and 251 at 128; a 6.4 M-element sum 13.0 us throughout.
_BLOCKS_PER_CU = 32
#: Elements a chunk of a cut reduction gets at least. On an H200 at 2048, 8192 and 32768: a sum of 2^26
#: float32 78, 77 and 71 us; 256 rows of 2^18 along them 88, 80 and 77 us; 2^18 rows of 256 along
#: axis 0 94, 107 and 106 us: within the 10% that unrelated settings moved the same cases.
_MIN_CHUNK = 8192


# -- a small shared helper (the sort module uses it too) ------------------------------------------


def read_scalar(x: Array, index: int) -> Any:
    """One element of the 1-D ``x``, read back to the host (the size of a data-dependent result)."""
    return memory.to_host(x._view((1,), (1,), x.offset + index * x.strides[0]))[0].item()


# -- instantiations ---------------------------------------------------------------------------------
#: Functors of reduction.hip (in its namespace ra_red) that the scans, nonzero and count_nonzero
#: name here; the rows of table.py and front_cumulative.py name their own.
_IDENTITY, _ADD, _NONZERO_INDEX = "ra_red::identity_op", "ra_red::add_op", "ra_red::nonzero_index_op"


def _kernel_acc(row: Reduction, compute: DType) -> DType:
    """The C of the kernel: bool for all/any, the index dtype for count_nonzero, else float32
    for 16-bit floats and the compute dtype otherwise."""
    if row.map == "ra_red::nonzero_op":
        return dtypes.bool
    if row.map == _NONZERO_INDEX:
        return dtypes.DEFAULT_INDEX
    return accumulator(compute)


@functools.lru_cache(maxsize=None)  # every reduction asks: 0.1 ms of Python per call uncached
def _triples(row: Reduction) -> Mapping[tuple[DType, DType, DType], None]:
    """(input, C, output) dtype triples a row is instantiated for, in order; a mapping, so that
    every reduction's ``in`` is one lookup (a tuple's took 17 dtype comparisons for sum)."""
    found: dict[tuple[DType, DType, DType], None] = {}
    for d in sorted(CATEGORIES[row.category], key=dtypes.ALL.index):
        out = RESULT_RULES[row.result](row.name, d, None)
        found[(d, _kernel_acc(row, accumulator(out) if row.accumulate else d), out)] = None
        # sum's and prod's dtype= may keep an integer input's dtype (bool is refused); mean's,
        # a floating one, is a cast to a floating triple already here.
        if "dtype" in row.options and row.result == "accumulate" and d in CATEGORIES["numeric"]:
            found[(d, _kernel_acc(row, accumulator(d)), d)] = None
    return MappingProxyType(found)


#: The first passes (reading elements) and the second (reading their accumulators), by layout;
#: reduce_all is both passes of a full reduction of contiguous elements in one launch.
_FIRST = ("reduce_inner", "reduce_inner_strided", "reduce_outer", "reduce_outer_vector", "reduce_all")
_SECOND = ("reduce_partial_rows", "reduce_partial_columns")


def _reduce_name(kind: str, row: Reduction, t: tuple[DType, DType, DType]) -> str:
    """A kernel of ``row`` for the triple ``t``; a second pass's reads accumulators: no input dtype."""
    types = t[1:] if kind in _SECOND else t
    return f"{kind}<{', '.join(d.c_type for d in types)}, {row.map}, {row.combine}, {row.finalize}>"


@functools.lru_cache(maxsize=None)
def _reduce_group(row: Reduction) -> tuple[str, ...]:
    first = (_reduce_name(k, row, t) for t in _triples(row) for k in _FIRST
             if k != "reduce_outer_vector" or t[0].itemsize < 16)  # (16-byte elements are one load already)
    second = (_reduce_name(k, row, t) for t in _triples(row) for k in _SECOND)
    return tuple(dict.fromkeys([*first, *second]))


@functools.lru_cache(maxsize=None)  # every scan asks: a small cumulative_sum took 63 us on an H200 uncached, 20 so
def _scan_triples(combine: str) -> Mapping[tuple[DType, DType, DType], None]:
    """The (input, accumulator, output) dtypes scan_tiles is built for with ``combine``, in order (a
    read-only mapping: a scan's lookup hashes, where a list compared every triple)."""
    found: dict[tuple[DType, DType, DType], None] = {}
    for d in sorted(CATEGORIES["any"], key=dtypes.ALL.index):
        out = accumulation_dtype(combine, d, None)
        found[(d, accumulator(out), out)] = None
        if d in CATEGORIES["numeric"]:  # (dtype=bool is refused)
            found[(d, accumulator(d), d)] = None
    return MappingProxyType(found)


def _scan_name(t: tuple[DType, DType, DType], map_: str, combine: str) -> str:
    return f"scan_tiles<{t[0].c_type}, {t[1].c_type}, {t[2].c_type}, {map_}, {combine}>"


@functools.lru_cache(maxsize=None)
def _scan_group(combine: str) -> tuple[str, ...]:
    return tuple(_scan_name(t, _IDENTITY, combine) for t in _scan_triples(combine))


@functools.lru_cache(maxsize=1)
def _nonzero_group() -> tuple[str, ...]:
    idx = dtypes.DEFAULT_INDEX
    return (*(_scan_name((d, idx, idx), _NONZERO_INDEX, _ADD) for d in dtypes.ALL),
            *(f"nonzero_scatter<{d.c_type}>" for d in dtypes.ALL))


def kernel_sources() -> list[KernelSource]:
    """Every program of reduction.hip, grouped as they are compiled at run time, and reductions of
    the deferred expressions the compile check builds (``fusion.Expressions.examples``) by each row
    that takes their dtype, in one launch and in rows."""
    generated = []
    provider = fusion.expressions()
    if provider is not None:  # (else nothing is deferred)
        # (a row for each expression, of each kind of accumulator: the others differ only in functors)
        for e, name in zip(provider.examples(), ("sum", "any", "var", "max", "argmax")):
            row = BY_NAME[name]
            compute = accumulation_dtype(row.name, e.out_dtype, None) if row.accumulate else e.out_dtype
            c, out = _kernel_acc(row, compute), RESULT_RULES[row.result](row.name, e.out_dtype, None)
            names = tuple(_fused_name(kind, row, c, out) for kind in ("reduce_all_of", "reduce_inner_of"))
            generated.extend(REDUCTION.sources([names], _fused_prelude(provider.prelude) + e.source()))
        for name, text in provider.row_examples(_row_examples()):
            generated.extend(REDUCTION.sources([(name,)], text))
    return [*REDUCTION.sources([*(_reduce_group(r) for r in REDUCTIONS), *(_scan_group(s.combine) for s in SCANS),
                                _nonzero_group()]), *generated]


# -- reductions -------------------------------------------------------------------------------------
def _split(n: int, pieces: int, least: int = _MIN_CHUNK) -> tuple[int, int]:
    """(chunk, count): ``n`` cut into at most ``pieces`` chunks of at least ``least``."""
    count = max(1, min(pieces, n // least))
    chunk = -(-n // count)
    return chunk, -(-n // chunk)


def _block_for(n: int, wave: int) -> int:
    """Threads for reducing ``n`` elements a block: a wave multiple, at most BLOCK."""
    return min(BLOCK, max(wave, -(-n // wave) * wave))


def reduce(row: Reduction, x: Array, axes: tuple[int, ...], keepdims: bool, compute: DType,
           out_dtype: DType, options: dict[str, Any]) -> Array:
    if fusion.active():
        deferred = _reduce_rows(row, x, axes, keepdims, compute, out_dtype, options)
        if deferred is not None:
            return deferred
    return _reduce(row, x, axes, keepdims, compute, out_dtype, options)


class _Plan(NamedTuple):
    """A reduction resolved once for its operand's kind: the first pass's launcher, grid and arguments
    after the result's and the operand's addresses; the second pass's launcher (reduce_partial_rows or
    reduce_partial_columns, over the first's accumulators) and grid, or None; the accumulators
    (splits) of each result; whether the first pass is reduce_all or reduce_all_of, whose last block
    folds the splits (one launch); whether it reads vectors (then only for an operand on a 16-byte
    boundary); and the result's elements, shape and strides."""

    first: Launcher
    grid: tuple[int, int, int]
    sizes: tuple[Any, ...]
    second: Launcher | None
    second_grid: tuple[int, int, int]
    splits: int
    folds: bool
    vector: bool
    outputs: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def run(self, out: Array, src: int | bytes, correction: float) -> None:
        """Queue the reduction into ``out`` of the operand at the address ``src`` (a generated kernel's:
        the expression's bytes)."""
        if self.folds:
            _fold_all(out._device, self.splits, lambda part, done: self.first(
                self.grid, (address(out), part, done, src, *self.sizes, correction)))
        elif self.second is None:
            self.first(self.grid, (address(out), src, *self.sizes, 0, correction))
        else:
            part = _acc_buffer(out._device, self.outputs * self.splits)
            self.first(self.grid, (address(part), src, *self.sizes, _PARTIAL_OUT, correction))
            self.second(self.second_grid, (address(out), address(part), self.outputs, self.splits, correction))

    def result(self, src: int | bytes, dtype: DType, device: Device, correction: float) -> Array:
        """A new result of ``dtype`` on ``device``, the reduction of ``src`` queued into it (``run``)."""
        out = memory.empty((self.outputs,), dtype, device)
        self.run(out, src, correction)
        return out._view(self.shape, self.strides, 0)


#: (row's name, x's dtype, shape and strides, axes, keepdims, compute and result dtypes, runtime) -> the
#: plan of its reduction. Without one, each call merged the dimensions, cut the grid, built the
#: geometries and made every argument a ctypes value: an eager ``sum(x, axis=-1)`` of 4096x1024 float32
#: took 208,932 instructions over a recording driver, 59,967 with it; a deferred ``max(x, axis=-1)``
#: computed at once 275,960, 126,424; a ``sum(x)`` of 2^20 float32 (reduce_all) 241,664, 81,346; a
#: ``sum(x, axis=0)`` of 4096x1024 float32 (two passes) 303,995, 87,293 (callgrind, ``.diag/cg_rows.sh``).
_PLANS: dict[tuple[Any, ...], _Plan] = {}


def _reduce(row: Reduction, x: Array, axes: tuple[int, ...], keepdims: bool, compute: DType,
            out_dtype: DType, options: dict[str, Any]) -> Array:
    """``reduce`` by this plugin's kernels (a deferred elementwise ``x`` computed in the first pass)."""
    key: tuple[Any, ...] | None = None
    if not isinstance(x._buf, LazyBuffer):  # (a deferred x may be computed in the first pass: no plan)
        key = (row.name, x._dtype, x._shape, x._strides, axes, keepdims, compute, out_dtype, x._device._runtime)
        plan = _PLANS.get(key)
        if plan is not None and (not plan.vector or address(x) % 16 == 0):
            return plan.result(address(x), out_dtype, x._device, float(options.get("correction", 0.0)))
    shape = reduced_shape(x.shape, axes, keepdims)
    c = _kernel_acc(row, compute)
    fused_out = _reduce_deferred(row, x, axes, keepdims, c, out_dtype, options, shape) if fusion.active() else None
    if fused_out is not None:
        return fused_out
    if (x.dtype, c, out_dtype) not in _triples(row):  # dtype= asked for another result dtype
        x, c, key = memory.contiguous(x, out_dtype), _kernel_acc(row, accumulator(out_dtype)), None
    axes = tuple(sorted(axes))
    kept_axes = tuple(d for d in range(x.ndim) if d not in axes)
    kshape, (kstr,) = merge_dims([x.shape[d] for d in kept_axes], [x.strides[d] for d in kept_axes])
    rshape, (rstr,) = merge_dims([x.shape[d] for d in axes], [x.strides[d] for d in axes])
    if len(kshape) > MAX_DIMS or len(rshape) > MAX_DIMS:
        order = kept_axes + axes  # rare: a copy with the kept axes first makes both one dimension
        x = memory.contiguous(x._view(tuple(x.shape[d] for d in order), tuple(x.strides[d] for d in order), x.offset),
                 x.dtype)
        k, r = math.prod(x.shape[:len(kept_axes)]), math.prod(x.shape[len(kept_axes):])
        kshape, kstr, rshape, rstr, key = (k,), (r,), (r,), (1,), None
    outputs, length = math.prod(kshape), math.prod(rshape)
    device = x.device
    t = (x.dtype, c, out_dtype)
    name = functools.partial(_reduce_name, row=row, t=t)
    if outputs == 1 or (length > 1 and abs(rstr[-1]) <= abs(kstr[-1])):
        kind = "reduce_inner" if len(rshape) == 1 and rstr[0] == 1 else "reduce_inner_strided"
        cut = _rows(device, outputs, length)
        folds = kind == "reduce_inner" and _folds(outputs, cut)
        first, group = name(kind="reduce_all" if folds else kind), _reduce_group(row)
        if cut.splits > 1 and not folds:
            REDUCTION.prepare(device, (first, name(kind="reduce_partial_rows")), group)  # (compiled side by side)
        plan = _rows_plan(device, row, t, REDUCTION.launcher(device, first, group, _ALL_ARGS if folds else _PASS_ARGS,
                                                             cut.block),
                          cut, outputs, folds, (length, cut.chunk, cut.fold) if folds else
                          (outputs, length, cut.chunk, bytes(geometry(kshape, kstr)), bytes(geometry(rshape, rstr))),
                          shape)
    else:
        plan = _outer_plan(row, name, x, kshape, kstr, rshape, rstr, shape)
    if key is not None:
        kept(_PLANS, key, plan)
    return plan.result(address(x), out_dtype, device, float(options.get("correction", 0.0)))


#: A first pass's arguments (reduce_inner, reduce_inner_strided, reduce_outer and its vector form): the
#: result's and the input's addresses, rows (or columns), length and chunk, the kept and reduced
#: geometries, the flags and the parameter.
_PASS_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
               geometry_struct(1), geometry_struct(1), ctypes.c_int32, ctypes.c_double)
#: A second pass's (reduce_partial_rows and reduce_partial_columns): the result's and the partials'
#: addresses, the rows (or columns), the splits and the parameter.
_SECOND_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_double)
#: reduce_all's: the result's, the partials', the counter's and the input's addresses, the length, the
#: chunk, the folding threads and the parameter.
_ALL_ARGS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
             ctypes.c_int32, ctypes.c_double)


def _acc_buffer(device: Device, count: int) -> Array:
    return memory.empty((count * _ACC_BYTES,), dtypes.uint8, device)


class _Rows(NamedTuple):
    """How a first pass over ``rows`` rows of ``length`` is cut: ``splits`` chunks of ``chunk`` a
    row, the launch's ``grid`` and ``block``, and ``fold``, the threads of the second pass."""

    chunk: int
    splits: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    fold: int


def _rows(device: Device, rows: int, length: int) -> _Rows:
    props = device.runtime.properties
    target = props.compute_units * _BLOCKS_PER_CU
    chunk, splits = _split(length, -(-target // rows)) if rows < target else (length, 1)
    return _Rows(chunk, splits, (splits, min(rows, MAX_GRID_Y), 1),
                 (_block_for(min(chunk, 16 * BLOCK), props.wave_size), 1, 1), _block_for(splits, props.wave_size))


def _folds(rows: int, cut: _Rows) -> bool:
    """Whether a cut reduction is one launch (reduce_all): one row, whose partials the last block's
    threads fold."""
    return rows == 1 and cut.splits > 1 and cut.fold <= cut.block[0]


#: Per runtime: the counter of finished blocks reduce_all and reduce_all_of use (zero between launches).
_DONE: dict[Any, Array] = {}


def _done(device: Device) -> Array:
    """The counter of ``device``, made at its first use: before the launch's partials buffer, which
    ``_fold_all`` holds until the launch is queued. (A buffer dropped before its launch is back on the
    free list: a counter made after it took the same block, the blocks wrote their partials over
    it, and every later full reduction of that process was wrong: 6 tests on an H100.)"""
    done = _DONE.get(device.runtime)
    if done is None:
        done = _DONE[device.runtime] = memory.empty((1,), dtypes.uint32, device)
        device.runtime.memset(address(done), 0, 4)  # (not memory.full: a first sum compiles no fill kernel)
    return done


def _fold_all(device: Device, splits: int, launch: Callable[[int, int], None]) -> None:
    """Queue a one-launch full reduction (reduce_all or reduce_all_of) through ``launch(part, done)``,
    given the addresses of the partials' buffer (``splits`` accumulators) and of the counter: the
    counter first, then the buffer, held until the launch is queued (see ``_done``)."""
    done = _done(device)
    part = _acc_buffer(device, splits)
    launch(address(part), address(done))


def _rows_plan(device: Device, row: Reduction, t: tuple[DType, DType, DType], first: Launcher, cut: _Rows,
               rows: int, folds: bool, sizes: tuple[Any, ...], shape: tuple[int, ...]) -> _Plan:
    """The plan of reducing ``rows`` rows cut as ``cut``, whose first pass is ``first`` (launched with
    ``sizes``; ``folds``: reduce_all or reduce_all_of): where the rows are cut and the first pass does
    not fold them, a second, reduce_partial_rows of ``row`` and the dtypes ``t``, combines each row's
    accumulators."""
    second = None
    if cut.splits > 1 and not folds:
        second = REDUCTION.launcher(device, _reduce_name("reduce_partial_rows", row, t), _reduce_group(row),
                                    _SECOND_ARGS, (cut.fold, 1, 1))
    return _Plan(first, cut.grid, sizes, second, (1, cut.grid[1], 1), cut.splits, folds, False, rows, shape,
                 contiguous_strides(shape))


def _outer_plan(row: Reduction, name: Any, x: Array, kshape: tuple[int, ...], kstr: tuple[int, ...],
                rshape: tuple[int, ...], rstr: tuple[int, ...], shape: tuple[int, ...]) -> _Plan:
    """The plan of reducing ``x`` along columns (the merged reduced dimensions ``rshape``, ``rstr`` and
    kept ones ``kshape``, ``kstr``): vectors where ``x``'s layout and address allow them."""
    device = x.device
    props = device.runtime.properties
    group, wave = _reduce_group(row), props.wave_size
    cols, length = math.prod(kshape), math.prod(rshape)
    block = (wave, BLOCK // wave, 1)
    v = vector_width(x.dtype.itemsize)
    vector = (v > 1 and kstr[-1] == 1 and kshape[-1] % v == 0 and address(x) % 16 == 0
              and all(s % v == 0 for s in (*kstr[:-1], *rstr)))
    width = v if vector else 1
    col_blocks = -(-cols // (wave * width))
    target = props.compute_units * _BLOCKS_PER_CU
    # A column chunk of a few dozen rows per thread row already keeps the loads streaming.
    chunk, splits = (_split(length, -(-target // col_blocks), 32 * block[1]) if col_blocks < target
                     else (length, 1))
    splits = min(splits, MAX_GRID_Y)
    chunk = -(-length // splits)
    fn = name(kind="reduce_outer_vector" if vector else "reduce_outer")
    second = name(kind="reduce_partial_columns") if splits > 1 else None
    if second is not None:
        REDUCTION.prepare(device, (fn, second), group)  # (compiled side by side)
    return _Plan(
        REDUCTION.launcher(device, fn, group, _PASS_ARGS, block, _OUTER_SHARED), (col_blocks, splits, 1),
        (cols, length, chunk, bytes(geometry(kshape, kstr)), bytes(geometry(rshape, rstr))),
        None if second is None else REDUCTION.launcher(device, second, group, _SECOND_ARGS, block, _OUTER_SHARED),
        (-(-cols // wave), 1, 1), splits, False, vector, cols, shape, contiguous_strides(shape))


# -- reductions of deferred elementwise results (fusion) ---------------------------------------------
@functools.lru_cache(maxsize=1)
def _fused_prelude(prelude: Callable[[], str]) -> str:
    """What a reduction of an expression compiles before the expression's struct: its provider's
    ``prelude()``, then reduction.hip (its functors, in namespace ra_red, keep apart from the
    elementwise ones)."""
    return prelude() + "\n" + _reduction_source()


def _fused_name(kind: str, row: Reduction, c: DType, out: DType) -> str:
    return f"{kind}<RaComputed<RaFused>, {c.c_type}, {out.c_type}, {row.map}, {row.combine}, {row.finalize}>"


def _reduce_deferred(row: Reduction, x: Array, axes: tuple[int, ...], keepdims: bool, c: DType, out_dtype: DType,
                     options: dict[str, Any], shape: tuple[int, ...]) -> Array | None:
    """The reduction (of the result ``shape``) of a deferred elementwise result over its trailing axes,
    its expression computed in the reduction's first pass (no temporary; a full reduction is one
    launch), or None: ``x`` is not such a result, or the generated kernel is still compiling (the
    caller's path computes x). The expression comes from its provider, through the core
    (``fusion.expressions()``)."""
    provider = fusion.expressions()
    if provider is None:
        return None
    e = provider.expression(x)
    if e is None or (x.dtype, c, out_dtype) not in _triples(row):
        return None
    source = e.source()  # (the same text object for an expression's kind: its hash is kept)
    packed = e.computed()
    key = (row.name, source, x._dtype, x._shape, axes, keepdims, c, out_dtype, x._device._runtime)
    plan = _FUSED_PLANS.get(key)
    if plan is None:
        plan = _fused_plan(row, x, axes, c, out_dtype, provider, source, len(packed), shape)
        if plan is None:  # (not such a reduction, or its kernel still compiling: not kept)
            return None
        kept(_FUSED_PLANS, key, plan)
    return plan.result(packed, out_dtype, x._device, float(options.get("correction", 0.0)))


#: (row's name, the expression's text, x's dtype and shape, axes, keepdims, accumulator and result
#: dtypes, runtime) -> the plan of its reduction, its first pass the generated kernel (its argument the
#: expression's bytes). Without one, each call cut the grid, found the generated kernel under a lock
#: and made every argument a ctypes value: a ``sum(x * x)`` of 2^20 float32 took 246,316 instructions
#: over a recording driver, 164,599 with it (``.diag/cg_rows.sh``).
_FUSED_PLANS: dict[tuple[Any, ...], _Plan] = {}


def _fused_plan(row: Reduction, x: Array, axes: tuple[int, ...], c: DType, out_dtype: DType,
                provider: fusion.Expressions, source: str, size: int, shape: tuple[int, ...]) -> _Plan | None:
    """The plan of reducing the deferred ``x`` (of the expression text ``source``, its computed bytes
    ``size`` long) over ``axes`` into ``shape``, or None: axes that are not its trailing ones, nothing to
    reduce, or the generated kernel not ready (compiling on a thread, or failed: the caller computes x)."""
    k = x.ndim - len(axes)
    if tuple(sorted(axes)) != tuple(range(k, x.ndim)):
        return None
    rows, length = math.prod(x.shape[:k]), math.prod(x.shape[k:])
    if rows == 0 or length == 0:
        return None
    device = x.device
    cut = _rows(device, rows, length)
    one = _folds(rows, cut)
    name = _fused_name("reduce_all_of" if one else "reduce_inner_of", row, c, out_dtype)
    function = provider.generated(device, REDUCTION.source, name, REDUCTION.options_on(device),
                                  _fused_prelude(provider.prelude), source)
    if function is None:
        return None
    REDUCTION.check(device, name, cut.block)
    assert size % 8 == 0, size  # (RaComputed<RaFused> holds pointers: a multiple of 8 bytes, so aligned)
    src = ctypes.c_uint64 * (size // 8)
    # (reduce_all_of: reduce_all's arguments, the expression's bytes where the input's address goes)
    argtypes = ((*_ALL_ARGS[:3], src, *_ALL_ARGS[4:]) if one else
                (ctypes.c_void_p, src, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int32, ctypes.c_double))
    return _rows_plan(device, row, (x.dtype, c, out_dtype), device.runtime.launcher(function, argtypes, cut.block),
                      cut, rows, one, (length, cut.chunk, cut.fold) if one else (rows, length, cut.chunk), shape)


# -- reductions over the last axis, deferred (fusion: the elementwise plugin's row kernels) ---------------
def _reduce_rows(row: Reduction, x: Array, axes: tuple[int, ...], keepdims: bool, compute: DType,
                 out_dtype: DType, options: dict[str, Any]) -> Array | None:
    """The reduction of the contiguous ``x`` over its last axis deferred by the provider of expressions
    (``fusion.Expressions.reduce_rows``: an expression over it may compute it in its own kernel), or
    None: other axes or layouts, a dtype triple without a kernel (cast first), or rows this plugin's
    kernel cuts across blocks (a row kernel would fold them in another order: other bits). Whether a
    kind of operand is deferred, and as what, is found once (``_ROW_PLANS``)."""
    provider = fusion.expressions()
    if provider is None:
        return None
    key = (row.name, x._dtype, x._shape, x._strides, axes, keepdims, compute, out_dtype, tuple(options.items()),
           x._device._runtime)
    plan = _ROW_PLANS.get(key, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = kept(_ROW_PLANS, key, _row_plan(row, x, axes, keepdims, compute, out_dtype, options))
    if plan is None:
        return None
    reduction, shape = cast("tuple[fusion.RowReduction, tuple[int, ...]]", plan)
    return provider.reduce_rows(x, reduction, shape)


def _row_plan(row: Reduction, x: Array, axes: tuple[int, ...], keepdims: bool, compute: DType,
              out_dtype: DType, options: dict[str, Any]) -> tuple[fusion.RowReduction, tuple[int, ...]] | None:
    """What a deferred reduction of ``x``'s kind is (``_reduce_rows``): its RowReduction and its result's
    shape, or None when it is not deferred."""
    if axes != (x.ndim - 1,) or x._strides != contiguous_strides(x._shape):
        return None
    c = _kernel_acc(row, compute)
    if (x.dtype, c, out_dtype) not in _triples(row):
        return None
    length = x.shape[-1]
    rows = x.size // length if length else 0
    if rows == 0:
        return None
    device = x.device
    cut = _rows(device, rows, length)
    if cut.splits != 1:
        return None
    key = (row.name, x.dtype, x.ndim, c, compute, out_dtype, tuple(options.items()), device.runtime, cut.block[0])
    reduction = _ROW_REDUCTIONS.get(key)
    if reduction is None:
        kept = dict(options)
        reduction = _ROW_REDUCTIONS[key] = fusion.RowReduction(
            row.map, row.combine, row.finalize, c, out_dtype, float(options.get("correction", 0.0)), cut.block[0],
            _reduction_source(), REDUCTION.options_on(device),
            lambda a: _reduce(row, a, axes, False, compute, out_dtype, kept))
    return reduction, reduced_shape(x.shape, axes, keepdims)


#: (row's name, x's dtype, shape and strides, axes, keepdims, compute and result dtypes, options, runtime)
#: -> what a deferred reduction of x's kind is (``_row_plan``), or None: not deferred. Without it, each
#: call checked the layout and dtypes, cut the grid and built its RowReduction's key: a deferred
#: ``max(x, axis=-1)`` of 4096x1024 float32 computed at once took 126,424 instructions, 86,751 with it
#: (as ``_PLANS``'s).
_ROW_PLANS: dict[tuple[Any, ...], tuple[fusion.RowReduction, tuple[int, ...]] | None] = {}
_UNPLANNED = object()  # (``_ROW_PLANS.get``'s answer for a kind not seen yet)


#: The RowReduction of each kind of deferred reduction (its row, dtypes, options, device and block),
#: made once, not at each call (a frozen dataclass of ten fields, and a closure).
_ROW_REDUCTIONS: dict[tuple[Any, ...], fusion.RowReduction] = {}


def _row_examples() -> list[fusion.RowReduction]:
    """Deferred reductions for the compile check's row kernels (``Expressions.row_examples``): a
    softmax's max and sum of float32, a layer norm's mean and var of float64 (the options are any
    kind's: the check compiles each program with each kind's own)."""

    def of(name: str, dtype: DType) -> fusion.RowReduction:
        row = BY_NAME[name]
        out = RESULT_RULES[row.result](name, dtype, None)
        c = _kernel_acc(row, accumulator(out) if row.accumulate else dtype)
        return fusion.RowReduction(row.map, row.combine, row.finalize, c, out, 0.0, BLOCK, _reduction_source(), (),
                                   lambda a: a)  # (compiled only: no result is computed, eagerly or not)

    return [of("max", dtypes.float32), of("sum", dtypes.float32), of("mean", dtypes.float64),
            of("var", dtypes.float64)]


@functools.cache
def _reduction_source() -> str:
    return kernel_source(REDUCTION.source)


# -- scans ------------------------------------------------------------------------------------------
def _scan_tile(device: Device, c: DType) -> int:
    """Elements a tile of scan_tiles holds for the accumulator ``c`` (RaScanItems in reduction.hip)."""
    items = REDUCTION.value(device, "RA_SCAN_ITEMS")
    if c.itemsize > 4:
        items = max(1, items * 4 // c.itemsize)
    return REDUCTION.value(device, "RA_SCAN_BLOCK") * items


def _scan_slot_bytes(c: DType) -> int:
    """Bytes a slot of the look-back's state takes for the accumulator ``c`` (RaScanSlot in reduction.hip)."""
    return 8 if c.itemsize <= 4 else 16 if c.itemsize <= 8 else 32


class _ScanState:
    """scan_tiles's look-back state on one device for one slot size, kept between launches: the two
    tile counters, then the slots, zeroed once when made. Each launch takes the next ``mark`` (1, 2,
    3...) and publishes with it, so flags left by earlier launches read as unpublished and no launch
    clears the state first. A memset had cost each scan a call and a node on the stream: on an H200,
    PyTorch's time over ours went from 0.49 to 0.67 for a cumulative_sum of 2^22 float32 (30.2 to
    22.4 us, bound by the host), from 1.04 to 1.06 for 2^24 float64 and from 1.01 to 1.05 for int64;
    2^26 float32 stayed at 0.98 in that run (.diag/scan_ab.py against 1fd1239). Slots of one size put
    their flags at one offset, so a flag's word never held a value. A launch takes its mark and is
    queued under ``lock``: the stream runs the launches in mark order, which the counters' turns rely
    on (see reduction.hip). The state stays for the process, as the pool's blocks do (grown by halves:
    a 2^26-element float32 scan's is 68 KB)."""

    def __init__(self, slot: int) -> None:
        self.slot = slot  # (bytes of a slot)
        self.lock = threading.Lock()
        self.memory: Array | None = None
        self.mark = 0

    def marked(self, device: Device, nbytes: int) -> tuple[int, int]:
        """The state's address, at least ``nbytes`` long, and the next launch's mark (under ``lock``)."""
        memory_ = self.memory
        if memory_ is None or memory_.size < nbytes or self.mark >= _SCAN_LAST_MARK:
            if memory_ is None or memory_.size < nbytes:
                size = max(nbytes, 0 if memory_ is None else memory_.size * 3 // 2)
                memory_ = self.memory = memory.empty((size,), dtypes.uint8, device)
            device.runtime.memset(address(memory_), 0, memory_.size)
            self.mark = 0
        self.mark += 1
        return address(memory_), self.mark


#: The last mark before a state is zeroed again (a flag is 32 bits).
_SCAN_LAST_MARK = 2**32 - 1
#: (runtime, slot bytes) -> its state.
_SCAN_STATES: dict[tuple[Any, int], _ScanState] = {}


def _scan_state(device: Device, c: DType) -> _ScanState:
    """The look-back's state on ``device`` for slots of the accumulator ``c``."""
    key = (device.runtime, _scan_slot_bytes(c))
    state = _SCAN_STATES.get(key)
    if state is None:
        state = _SCAN_STATES.setdefault(key, _ScanState(key[1]))
    return state


class _ScanPlan(NamedTuple):
    """What a scan_tiles kernel's launches on one device share, resolved once (``_scan_plan``): its
    launcher (arguments packed in place, the block checked once), its tile's elements, the rows from
    which a block takes whole rows (no look-back), the wave, and the look-back's state."""

    launch: Launcher
    tile: int
    whole_rows: int  # (_SCAN_ROWS_PER_CU a compute unit)
    wave: int
    state: _ScanState


#: (runtime, kernel name, group) -> its plan.
_SCAN_PLANS: dict[tuple[Any, str, tuple[str, ...]], _ScanPlan] = {}


def _scan_plan(device: Device, name: str, group: tuple[str, ...], c: DType) -> _ScanPlan:
    """The plan of the scan_tiles kernel ``name`` (of ``group``, with the accumulator ``c``) on ``device``.
    A mid-size scan is bound by its host time: on an H200 a cumulative_sum of 2^22 float32 took 14.6 us
    with a plan (PyTorch 15.1), 22.4 in another run before it, when each launch made its ctypes values,
    checked its block and looked its kernel up, and the axis went last and back through views."""
    key = (device.runtime, name, group)
    plan = _SCAN_PLANS.get(key)
    if plan is None:
        block = (REDUCTION.value(device, "RA_SCAN_BLOCK"), 1, 1)
        argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                    ctypes.c_void_p, ctypes.c_uint]
        p = device.runtime.properties
        plan = _SCAN_PLANS[key] = _ScanPlan(REDUCTION.launcher(device, name, group, argtypes, block),
                                            _scan_tile(device, c), p.compute_units * _SCAN_ROWS_PER_CU,
                                            p.wave_size, _scan_state(device, c))
    return plan


def scan_rows(out: Array, x: Array, rows: int, length: int, c: DType,
              map_: str = _IDENTITY, combine: str = _ADD, group: tuple[str, ...] | None = None) -> None:
    """The inclusive scan of each contiguous row of ``x`` into ``out`` (which may be ``x``): one launch
    of scan_tiles, which reads ``x`` once (see reduction.hip)."""
    device = x.device
    name = _scan_name((x.dtype, c, out.dtype), map_, combine)
    plan = _scan_plan(device, name, group or (name,), c)
    tiles = -(-length // plan.tile)
    count = rows * tiles
    if tiles == 1 or rows >= plan.whole_rows:
        # (no look-back: no state; a block whole rows, see reduction.hip)
        plan.launch((min(rows, MAX_GRID_X), 1, 1), (address(out), address(x), rows, length, 0, 0, 0))
        return
    # A block a tile (the look-back's blocks each take one from a counter); rows of several tiles of
    # 512 or more elements (16-byte accumulators) fill no memory with 2^31 tiles. The state holds the
    # slots of the tiles' aggregates, then of the windows' totals (a window a wave of tiles), then of
    # the groups' totals (a group a wave of windows).
    assert count <= MAX_GRID_X, count
    windows = -(-tiles // plan.wave)
    slots = rows * (tiles + windows + -(-windows // plan.wave))
    state = plan.state
    with state.lock:
        base, mark = state.marked(device, _SCAN_SLOTS_AT + slots * state.slot)
        plan.launch((count, 1, 1), (address(out), address(x), rows, length, base, base + _SCAN_SLOTS_AT, mark))


def scan(row: Scan, x: Array, axis: int, compute: DType, out_dtype: DType) -> Array:
    if (x.dtype, compute, out_dtype) not in _scan_triples(row.combine):
        x = memory.contiguous(x, out_dtype)
    # (the common case, a contiguous array along its last axis, makes no views to move the axis and back)
    xt, order = (x, None) if axis == x.ndim - 1 and x.is_contiguous else moved_last(x, axis)
    out = memory.empty(xt.shape, out_dtype, x.device)
    length = x.shape[axis]
    scan_rows(out, xt, x.size // length, length, compute, _IDENTITY, row.combine, _scan_group(row.combine))
    return out if order is None else moved_back(out, order)


# -- nonzero and diff ---------------------------------------------------------------------------------
def nonzero(x: Array) -> tuple[Array, ...]:
    idx, device = dtypes.DEFAULT_INDEX, x.device
    n = x.size
    if n == 0:
        return tuple(memory.empty((0,), idx, device) for _ in range(x.ndim))
    xc = memory.contiguous(x, x.dtype)
    position = memory.empty((n,), idx, device)
    scan_rows(position, xc, 1, n, idx, _NONZERO_INDEX, _ADD, _nonzero_group())
    count = read_scalar(position, n - 1)
    out = memory.empty((x.ndim, count), idx, device)
    if count:
        REDUCTION.launch(device, f"nonzero_scatter<{x.dtype.c_type}>", _nonzero_group(), grid_1d(n, device),
                         (BLOCK, 1, 1), [ptr(out), ptr(xc), ptr(position), *i64(n, count),
                                         geometry(x.shape, (0,) * x.ndim)])
    return tuple(out._view((count,), (1,), d * count) for d in range(x.ndim))


def diff(x: Array, axis: int) -> Array:
    """One forward difference along ``axis``: the namespace's subtract of two shifted views."""
    shape = tuple(n - 1 if d == axis else n for d, n in enumerate(x.shape))
    lo = x._view(shape, x.strides, x.offset)
    hi = x._view(shape, x.strides, x.offset + x.strides[axis])
    return cast("Array", elementwise("subtract")(hi, lo))


def register() -> None:
    """Fill the ``gpu`` column of the reduction, scan, nonzero and diff tables."""
    backs.REDUCE["gpu"], backs.SCAN["gpu"], backs.NONZERO["gpu"], backs.DIFF["gpu"] = reduce, scan, nonzero, diff
