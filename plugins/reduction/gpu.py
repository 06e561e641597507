"""The gpu backs of the reductions, scans, nonzero and diff: launches of ``kernels/reduction/reduction.hip``.

Reductions. After merging dimensions, the kept axes and the reduced axes are one
geometry each. When the reduced elements of one output are nearer each other in
memory than neighbouring outputs are, ``reduce_inner`` gives each output a block
(vector loads along a contiguous innermost axis); otherwise ``reduce_outer`` gives
each output column a thread (coalesced loads across a wave). Either cuts long
reductions into chunks, whose accumulators a second launch combines (two passes,
no atomics: every row's functors, Welford and argmax pairs included, work alike).

Kernels are instantiated per (input, compute, output) dtype triple a row uses by
default, plus (d, accumulator(d), d) for the rows whose ``dtype=`` may ask for
another result: such a call casts the input to the result dtype first.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import TYPE_CHECKING, Any

from rocm_array import dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.hookspecs import KernelSource
from rocm_array.namespace import TABLE
from rocm_array.runtime.layout import BLOCK, MAX_DIMS, geometry, grid_1d, merge_dims

from .cumulative import SCAN
from .searching import NONZERO
from .diff import DIFF
from .front import REDUCE, RESULT_RULES, accumulation_dtype, accumulator, reduced_shape

if TYPE_CHECKING:
    from rocm_array.runtime.gpu import GpuRuntime

    from .cumulative import Scan
    from .front import Reduction

__all__ = ["SOURCE", "kernel_sources", "reduce", "scan", "scan_rows", "nonzero", "diff", "moved_last",
           "pointer", "ptr_or_null", "read_scalar"]

SOURCE = "reduction/reduction.hip"
_PARTIAL_IN, _PARTIAL_OUT, _VECTOR = 1, 2, 4  # RA_PARTIAL_IN, RA_PARTIAL_OUT, RA_VECTOR
_ACC_BYTES = 32  # room for the largest accumulator (Welford's count, mean, m2 in double: 24)
_BLOCKS_PER_CU = 8  # blocks a reduction aims for: enough loads in flight to fill the memory system
_MIN_CHUNK = 8192  # elements a chunk of a cut reduction gets at least
_SCAN_TILE = 256 * 8  # scan_tiles' block * RA_SCAN_ITEMS
_MAX_GRID_Y = 65535


# -- small shared helpers (the sort module uses them too) ---------------------------------------
def pointer(rt: GpuRuntime, x: Array) -> ctypes.c_void_p:
    return ctypes.c_void_p(rt.pointer(x))


def ptr_or_null(rt: GpuRuntime, x: Array | None) -> ctypes.c_void_p:
    return ctypes.c_void_p(None) if x is None else pointer(rt, x)


def i64(*values: int) -> list[ctypes.c_int64]:
    return [ctypes.c_int64(v) for v in values]


def moved_last(x: Array, axis: int) -> tuple[Array, tuple[int, ...]]:
    """A contiguous copy of ``x`` with ``axis`` moved last (``x`` itself when it is already so),
    and the axis order that copy has."""
    order = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    if axis == x.ndim - 1 and x.is_contiguous:
        return x, order
    view = x._view(tuple(x.shape[d] for d in order), tuple(x.strides[d] for d in order), x.offset)
    return memory.contiguous(view, x.dtype), order


def moved_back(out: Array, order: tuple[int, ...]) -> Array:
    """The view of ``out`` (laid out in ``order``) with the original axis order."""
    shape, strides = [0] * out.ndim, [0] * out.ndim
    for pos, d in enumerate(order):
        shape[d], strides[d] = out.shape[pos], out.strides[pos]
    return out._view(tuple(shape), tuple(strides), out.offset)


def read_scalar(x: Array, index: int) -> Any:
    """One element of the 1-D ``x``, read back to the host (the size of a data-dependent result)."""
    return memory.to_host(x._view((1,), (1,), x.offset + index * x.strides[0]))[0].item()


def _launch(rt: GpuRuntime, name: str, group: tuple[str, ...], grid: tuple[int, int, int],
            block: tuple[int, int, int], args: list[Any], shared: int = 0) -> None:
    rt.launch(rt.kernel(SOURCE, name, group), grid, block, args, shared)


# -- instantiations ---------------------------------------------------------------------------------
def _kernel_acc(row: Reduction, compute: DType) -> DType:
    """The C of the kernel: bool for all/any, the index dtype for count_nonzero, else float32
    for 16-bit floats and the compute dtype otherwise."""
    if row.map == "nonzero_op":
        return dtypes.bool
    if row.map == "nonzero_index_op":
        return dtypes.DEFAULT_INDEX
    return accumulator(compute)


def _triples(row: Reduction) -> list[tuple[DType, DType, DType]]:
    """(input, C, output) dtype triples a row is instantiated for."""
    found: dict[tuple[DType, DType, DType], None] = {}
    for d in sorted(CATEGORIES[row.category], key=dtypes.ALL.index):
        out = RESULT_RULES[row.result](row.name, d, None)
        found[(d, _kernel_acc(row, accumulator(out) if row.accumulate else d), out)] = None
        if "dtype" in row.options:
            found[(d, _kernel_acc(row, accumulator(d)), d)] = None
    return list(found)


def _reduce_name(kind: str, row: Reduction, t: tuple[DType, DType, DType]) -> str:
    return f"{kind}<{t[0].c_type}, {t[1].c_type}, {t[2].c_type}, {row.map}, {row.combine}, {row.finalize}>"


@functools.lru_cache(maxsize=None)
def _reduce_group(row: Reduction) -> tuple[str, ...]:
    return tuple(_reduce_name(k, row, t) for t in _triples(row) for k in ("reduce_inner", "reduce_outer"))


def _scan_triples(combine: str) -> list[tuple[DType, DType, DType]]:
    found: dict[tuple[DType, DType, DType], None] = {}
    for d in sorted(CATEGORIES["numeric"], key=dtypes.ALL.index):
        out = accumulation_dtype(combine, d, None)
        found[(d, accumulator(out), out)] = None
        found[(d, accumulator(d), d)] = None
    return list(found)


def _scan_name(t: tuple[DType, DType, DType], map_: str, combine: str) -> str:
    return f"scan_tiles<{t[0].c_type}, {t[1].c_type}, {t[2].c_type}, {map_}, {combine}>"


@functools.lru_cache(maxsize=None)
def _scan_group(combine: str) -> tuple[str, ...]:
    return tuple(_scan_name(t, "identity_op", combine) for t in _scan_triples(combine))


@functools.lru_cache(maxsize=1)
def _nonzero_group() -> tuple[str, ...]:
    idx = dtypes.DEFAULT_INDEX
    return (*(_scan_name((d, idx, idx), "nonzero_index_op", "add_op") for d in dtypes.ALL),
            *(f"nonzero_scatter<{d.c_type}>" for d in dtypes.ALL))


def kernel_sources() -> list[KernelSource]:
    """Every program of reduction.hip, grouped as they are compiled at run time."""
    from .cumulative import SCANS
    from .table import REDUCTIONS

    return [*(KernelSource(SOURCE, _reduce_group(r)) for r in REDUCTIONS),
            *(KernelSource(SOURCE, _scan_group(s.combine)) for s in SCANS),
            KernelSource(SOURCE, _nonzero_group())]


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
    rt = x.device.runtime
    shape = reduced_shape(x.shape, axes, keepdims)
    c = _kernel_acc(row, compute)
    if (x.dtype, c, out_dtype) not in _triples(row):  # dtype= asked for another result dtype
        x, c = memory.contiguous(x, out_dtype), _kernel_acc(row, accumulator(out_dtype))
    axes = tuple(sorted(axes))
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    kshape, (kstr,) = merge_dims([x.shape[d] for d in kept], [x.strides[d] for d in kept])
    rshape, (rstr,) = merge_dims([x.shape[d] for d in axes], [x.strides[d] for d in axes])
    if len(kshape) > MAX_DIMS or len(rshape) > MAX_DIMS:
        order = kept + axes  # rare: a copy with the kept axes first makes both one dimension
        x = memory.contiguous(x._view(tuple(x.shape[d] for d in order), tuple(x.strides[d] for d in order), x.offset),
                 x.dtype)
        k, r = math.prod(x.shape[:len(kept)]), math.prod(x.shape[len(kept):])
        kshape, kstr, rshape, rstr = (k,), (r,), (r,), (1,)
    outputs, length = math.prod(kshape), math.prod(rshape)
    out = memory.empty((outputs,), out_dtype, x.device)
    param = ctypes.c_double(options.get("correction", 0.0))
    name = functools.partial(_reduce_name, row=row, t=(x.dtype, c, out_dtype))
    if outputs == 1 or (length > 1 and abs(rstr[-1]) <= abs(kstr[-1])):
        _inner(rt, row, name, out, x, outputs, length, geometry(kshape, kstr), geometry(rshape, rstr), param)
    else:
        _outer(rt, row, name, out, x, kshape, kstr, rshape, rstr, param)
    return out._view(shape, contiguous_strides(shape), 0)


def _acc_buffer(rt: GpuRuntime, count: int) -> Array:
    return rt.empty((count * _ACC_BYTES,), dtypes.uint8)


def _inner(rt: GpuRuntime, row: Reduction, name: Any, out: Array, x: Array, rows: int, length: int,
           kept: ctypes.Structure, red: ctypes.Structure, param: ctypes.c_double) -> None:
    group, wave = _reduce_group(row), rt.properties.wave_size
    target = rt.properties.compute_units * _BLOCKS_PER_CU
    chunk, splits = _split(length, -(-target // rows)) if rows < target else (length, 1)
    fn = rt.kernel(SOURCE, name(kind="reduce_inner"), group)
    grid = (splits, min(rows, _MAX_GRID_Y), 1)
    block = (_block_for(min(chunk, 16 * BLOCK), wave), 1, 1)
    if splits == 1:
        rt.launch(fn, grid, block, [pointer(rt, out), pointer(rt, x), *i64(rows, length, chunk), kept, red,
                                    ctypes.c_int32(0), param])
        return
    part = _acc_buffer(rt, rows * splits)
    rt.launch(fn, grid, block, [pointer(rt, part), pointer(rt, x), *i64(rows, length, chunk), kept, red,
                                ctypes.c_int32(_PARTIAL_OUT), param])
    rt.launch(fn, (1, grid[1], 1), (_block_for(splits, wave), 1, 1),
              [pointer(rt, out), pointer(rt, part), *i64(rows, splits, splits), geometry((rows,), (splits,)),
               geometry((splits,), (1,)), ctypes.c_int32(_PARTIAL_IN), param])


def _outer(rt: GpuRuntime, row: Reduction, name: Any, out: Array, x: Array, kshape: tuple[int, ...],
           kstr: tuple[int, ...], rshape: tuple[int, ...], rstr: tuple[int, ...], param: ctypes.c_double) -> None:
    group, wave = _reduce_group(row), rt.properties.wave_size
    cols, length = math.prod(kshape), math.prod(rshape)
    block = (wave, BLOCK // wave, 1)
    v = 16 // x.dtype.itemsize if x.dtype.itemsize < 16 else 1
    vector = (v > 1 and kstr[-1] == 1 and kshape[-1] % v == 0 and rt.pointer(x) % 16 == 0
              and all(s % v == 0 for s in (*kstr[:-1], *rstr)))
    width = v if vector else 1
    col_blocks = -(-cols // (wave * width))
    target = rt.properties.compute_units * _BLOCKS_PER_CU
    # A column chunk of a few dozen rows per thread row already keeps the loads streaming.
    chunk, splits = (_split(length, -(-target // col_blocks), 32 * block[1]) if col_blocks < target
                     else (length, 1))
    splits = min(splits, _MAX_GRID_Y)
    chunk = -(-length // splits)
    fn = rt.kernel(SOURCE, name(kind="reduce_outer"), group)
    shared = BLOCK * _ACC_BYTES
    flags = _VECTOR if vector else 0
    kept, red = geometry(kshape, kstr), geometry(rshape, rstr)
    if splits == 1:
        rt.launch(fn, (col_blocks, 1, 1), block, [pointer(rt, out), pointer(rt, x), *i64(cols, length, chunk),
                                                  kept, red, ctypes.c_int32(flags), param], shared)
        return
    part = _acc_buffer(rt, cols * splits)
    rt.launch(fn, (col_blocks, splits, 1), block, [pointer(rt, part), pointer(rt, x), *i64(cols, length, chunk),
                                                   kept, red, ctypes.c_int32(flags | _PARTIAL_OUT), param], shared)
    rt.launch(fn, (-(-cols // wave), 1, 1), block,
              [pointer(rt, out), pointer(rt, part), *i64(cols, splits, splits), geometry((cols,), (1,)),
               geometry((splits,), (cols,)), ctypes.c_int32(_PARTIAL_IN), param], shared)


# -- scans ------------------------------------------------------------------------------------------
def scan_rows(rt: GpuRuntime, out: Array, x: Array, rows: int, length: int, c: DType,
              map_: str = "identity_op", combine: str = "add_op", group: tuple[str, ...] | None = None) -> None:
    """The inclusive scan of each contiguous row of ``x`` into ``out`` (which may be ``x``)."""
    t = (x.dtype, c, out.dtype)
    name = _scan_name(t, map_, combine)
    fn = rt.kernel(SOURCE, name, group or (name,))
    tiles = -(-length // _SCAN_TILE)
    grid = (min(tiles, 2**31 - 1), min(rows, _MAX_GRID_Y), 1)
    args = [pointer(rt, out), pointer(rt, x), *i64(rows, length)]
    if tiles == 1:
        rt.launch(fn, grid, (BLOCK, 1, 1), [*args, ctypes.c_void_p(None), ctypes.c_void_p(None)])
        return
    totals = rt.empty((rows * tiles,), c)
    rt.launch(fn, grid, (BLOCK, 1, 1), [*args, ctypes.c_void_p(None), pointer(rt, totals)])
    scan_rows(rt, totals, totals, rows, tiles, c, "identity_op", combine, _scan_group(combine))
    rt.launch(fn, grid, (BLOCK, 1, 1), [*args, pointer(rt, totals), ctypes.c_void_p(None)])


def scan(row: Scan, x: Array, axis: int, compute: DType, out_dtype: DType) -> Array:
    rt = x.device.runtime
    if (x.dtype, compute, out_dtype) not in _scan_triples(row.combine):
        x = memory.contiguous(x, out_dtype)
    xt, order = moved_last(x, axis)
    out = memory.empty(xt.shape, out_dtype, x.device)
    length = x.shape[axis]
    scan_rows(rt, out, xt, x.size // length, length, compute, "identity_op", row.combine,
              _scan_group(row.combine))
    return moved_back(out, order)


# -- nonzero and diff ---------------------------------------------------------------------------------
def nonzero(x: Array) -> tuple[Array, ...]:
    rt, idx = x.device.runtime, dtypes.DEFAULT_INDEX
    n = x.size
    if n == 0:
        return tuple(memory.empty((0,), idx, x.device) for _ in range(x.ndim))
    xc = memory.contiguous(x, x.dtype)
    position = rt.empty((n,), idx)
    scan_rows(rt, position, xc, 1, n, idx, "nonzero_index_op", "add_op", _nonzero_group())
    count = read_scalar(position, n - 1)
    out = rt.empty((x.ndim, count), idx)
    if count:
        fn = rt.kernel(SOURCE, f"nonzero_scatter<{x.dtype.c_type}>", _nonzero_group())
        rt.launch(fn, (grid_1d(n, rt.properties.compute_units), 1, 1), (BLOCK, 1, 1),
                  [pointer(rt, out), pointer(rt, xc), pointer(rt, position), *i64(n, count),
                   geometry(x.shape, (0,) * x.ndim)])
    return tuple(out._view((count,), (1,), d * count) for d in range(x.ndim))


def diff(x: Array, axis: int) -> Array:
    """One forward difference along ``axis``: the namespace's subtract of two shifted views."""
    shape = tuple(n - 1 if d == axis else n for d, n in enumerate(x.shape))
    lo = x._view(shape, x.strides, x.offset)
    hi = x._view(shape, x.strides, x.offset + x.strides[axis])
    return TABLE["subtract"](hi, lo)


REDUCE["gpu"] = reduce
SCAN["gpu"] = scan
NONZERO["gpu"] = nonzero
DIFF["gpu"] = diff
