"""The gpu backs of sorting, sets and searchsorted: launches of ``kernels/reduction/sort.hip``.

One LSD radix sort serves them all (see sort.hip for the keys and the passes):
``sort`` of one row sorts the keys alone and turns them back into values;
``argsort`` and sorts of many rows carry uint32 indices and sort by the row after
the value (a second, stable LSD sort on the row number). ``unique_*`` sort once,
mark where the sorted values change, scan the marks, and scatter; ``isin`` sorts
the second operand and binary-searches it; ``searchsorted`` binary-searches in
the order sort gives (NaNs last). Only the sizes of data-dependent results
(the number of unique values) are read back to the host.
"""

from __future__ import annotations

import ctypes
import functools

from rocm_array import dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.hookspecs import KernelSource
from rocm_array.runtime.layout import BLOCK, grid_1d

from . import searching, sets, sorting
from .gpu import i64, moved_back, moved_last, pointer, ptr_or_null, read_scalar, scan_rows

__all__ = ["SOURCE", "kernel_sources", "sort", "argsort", "unique", "isin", "searchsorted"]

SOURCE = "reduction/sort.hip"
_DESCENDING, _CANON_ZERO, _IMAG_PART = 1, 2, 4  # RA_DESCENDING, RA_CANON_ZERO, RA_IMAG_PART
_RADIX = 256
_LIMIT = 2**32  # indices ride along as uint32
_U32 = dtypes.uint32
_COUNT_SCAN = "scan_tiles<uint32_t, uint32_t, uint32_t, identity_op, add_op>"


def _key_dtype(dtype: DType) -> DType:
    real = dtypes.real_of(dtype)
    return dtypes.uint32 if real.itemsize <= 4 else dtypes.uint64


@functools.lru_cache(maxsize=None)
def _group(dtype: DType) -> tuple[str, ...]:
    """The sort.hip kernels for one element dtype (those its functions admit)."""
    t = dtype.c_type
    names = [f"sort_keys<{t}>", f"sort_gather<{t}>", f"unique_flags<{t}>", f"unique_scatter<{t}>",
             f"isin_sorted<{t}>"]
    if dtype.kind != "c":
        names.append(f"sort_values<{t}>")
    if dtype in CATEGORIES["real-valued"]:
        names.append(f"searchsorted<{t}>")
    return tuple(names)


_COMMON = ("radix_histogram<uint32_t>", "radix_histogram<uint64_t>", "radix_scatter<uint32_t>",
           "radix_scatter<uint64_t>", "segment_keys<uint32_t>", "sort_indices<uint32_t>",
           "unique_counts<int64_t>")


def kernel_sources() -> list[KernelSource]:
    from .gpu import SOURCE as REDUCTION

    return [KernelSource(SOURCE, _COMMON), KernelSource(REDUCTION, (_COUNT_SCAN,)),
            *(KernelSource(SOURCE, _group(d)) for d in dtypes.ALL)]


def _launch(rt, name: str, group: tuple[str, ...], n: int, args: list) -> None:  # type: ignore[no-untyped-def]
    rt.launch(rt.kernel(SOURCE, name, group), (grid_1d(n, rt.properties.compute_units), 1, 1), (BLOCK, 1, 1), args)


def _check_size(name: str, n: int) -> None:
    if n >= _LIMIT:
        raise ValueError(f"{name}(): the GPU sort takes fewer than 2**32 elements, got {n}")


# -- the radix sort ---------------------------------------------------------------------------------
def _radix(rt, keys: Array, vals: Array | None, digits: int) -> tuple[Array, Array | None]:  # type: ignore[no-untyped-def]
    """``keys`` (uint32 or uint64) sorted stably on their low ``digits`` bytes, ``vals`` alongside."""
    n = keys.size
    k = keys.dtype.c_type
    tile = BLOCK * (16 if keys.dtype.itemsize == 4 else 8)  # RaTile's items
    blocks = -(-n // tile)
    hist = rt.empty((_RADIX * blocks,), _U32)
    keys2 = rt.empty((n,), keys.dtype)
    vals2 = None if vals is None else rt.empty((n,), _U32)
    histogram = rt.kernel(SOURCE, f"radix_histogram<{k}>", _COMMON)
    scatter = rt.kernel(SOURCE, f"radix_scatter<{k}>", _COMMON)
    for p in range(digits):
        shift = ctypes.c_int32(8 * p)
        rt.launch(histogram, (min(blocks, rt.properties.compute_units * 32), 1, 1), (BLOCK, 1, 1),
                  [pointer(rt, keys), ctypes.c_int64(n), shift, pointer(rt, hist), ctypes.c_int64(blocks)])
        scan_rows(rt, hist, hist, 1, hist.size, _U32)
        rt.launch(scatter, (blocks, 1, 1), (BLOCK, 1, 1),
                  [pointer(rt, keys2), ptr_or_null(rt, vals2), pointer(rt, keys), ptr_or_null(rt, vals),
                   ctypes.c_int64(n), shift, pointer(rt, hist), ctypes.c_int64(blocks)])
        keys, keys2, vals, vals2 = keys2, keys, vals2, vals
    return keys, vals


def _argsort_rows(rt, x: Array, length: int, flags: int) -> Array:  # type: ignore[no-untyped-def]
    """The stable order (uint32 flat indices) sorting each contiguous row of ``length`` of ``x``."""
    n, t = x.size, x.dtype
    keys = rt.empty((n,), _key_dtype(t))
    idx = rt.empty((n,), _U32)
    digits = dtypes.real_of(t).itemsize
    parts = (_IMAG_PART, 0) if t.kind == "c" else (0,)  # least significant key first
    first = True
    for part in parts:
        _launch(rt, f"sort_keys<{t.c_type}>", _group(t), n,
                [pointer(rt, keys), pointer(rt, idx), pointer(rt, x), ptr_or_null(rt, None if first else idx),
                 ctypes.c_int64(n), ctypes.c_int32(flags | part)])
        keys, idx = _radix(rt, keys, idx, digits)  # type: ignore[assignment]
        first = False
    rows = n // length
    if rows > 1:
        seg = rt.empty((n,), _U32)
        _launch(rt, "segment_keys<uint32_t>", _COMMON, n, [pointer(rt, seg), pointer(rt, idx), *i64(n, length)])
        _, idx = _radix(rt, seg, idx, -(-(rows - 1).bit_length() // 8))  # type: ignore[assignment]
    return idx


def _sorted(rt, x: Array, flags: int) -> Array:  # type: ignore[no-untyped-def]
    """The contiguous 1-D ``x`` sorted (keys only for real values; complex ones gathered)."""
    n, t = x.size, x.dtype
    out = rt.empty((n,), t)
    if t.kind == "c":
        idx = _argsort_rows(rt, x, n, flags | _CANON_ZERO)
        _launch(rt, f"sort_gather<{t.c_type}>", _group(t), n, [pointer(rt, out), pointer(rt, x), pointer(rt, idx),
                                                                ctypes.c_int64(n)])
        return out
    keys = rt.empty((n,), _key_dtype(t))
    _launch(rt, f"sort_keys<{t.c_type}>", _group(t), n,
            [pointer(rt, keys), ctypes.c_void_p(None), pointer(rt, x), ctypes.c_void_p(None), ctypes.c_int64(n),
             ctypes.c_int32(flags)])
    keys, _ = _radix(rt, keys, None, t.itemsize)
    _launch(rt, f"sort_values<{t.c_type}>", _group(t), n,
            [pointer(rt, out), pointer(rt, keys), ctypes.c_int64(n), ctypes.c_int32(flags)])
    return out


# -- the backs --------------------------------------------------------------------------------------
def sort(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    rt, n = x.device.runtime, x.size
    _check_size("sort", n)
    flags = _DESCENDING if descending else 0
    if n == 0:
        return memory.empty(x.shape, x.dtype, x.device)
    xt, order = moved_last(x, axis)
    length = x.shape[axis]
    if length == n:
        out = _sorted(rt, xt, flags)
    else:
        idx = _argsort_rows(rt, xt, length, flags | _CANON_ZERO)
        out = rt.empty((n,), x.dtype)
        _launch(rt, f"sort_gather<{x.dtype.c_type}>", _group(x.dtype), n,
                [pointer(rt, out), pointer(rt, xt), pointer(rt, idx), ctypes.c_int64(n)])
    return moved_back(out._view(xt.shape, contiguous_strides(xt.shape), 0), order)


def argsort(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    rt, n = x.device.runtime, x.size
    _check_size("argsort", n)
    if n == 0:
        return memory.empty(x.shape, dtypes.DEFAULT_INDEX, x.device)
    xt, order = moved_last(x, axis)
    length = x.shape[axis]
    idx = _argsort_rows(rt, xt, length, (_DESCENDING if descending else 0) | _CANON_ZERO)
    out = rt.empty(xt.shape, dtypes.DEFAULT_INDEX)
    _launch(rt, "sort_indices<uint32_t>", _COMMON, n, [pointer(rt, out), pointer(rt, idx), *i64(n, length)])
    return moved_back(out, order)


def unique(x: Array) -> tuple[Array, Array, Array, Array]:
    rt, n, t, index = x.device.runtime, x.size, x.dtype, dtypes.DEFAULT_INDEX
    _check_size("unique", n)
    if n == 0:
        empty = memory.empty((0,), index, x.device)
        return memory.empty((0,), t, x.device), empty, memory.empty(x.shape, index, x.device), empty
    xc = memory.contiguous(x, t)
    perm = _argsort_rows(rt, xc, n, _CANON_ZERO)
    marks = rt.empty((n,), _U32)
    _launch(rt, f"unique_flags<{t.c_type}>", _group(t), n,
            [pointer(rt, marks), pointer(rt, xc), pointer(rt, perm), ctypes.c_int64(n)])
    group = rt.empty((n,), _U32)
    scan_rows(rt, group, marks, 1, n, _U32)
    count = read_scalar(group, n - 1)
    values = rt.empty((count,), t)
    first, starts, counts = (rt.empty((count,), index) for _ in range(3))
    inverse = rt.empty(x.shape, index)
    _launch(rt, f"unique_scatter<{t.c_type}>", _group(t), n,
            [pointer(rt, values), pointer(rt, first), pointer(rt, inverse), pointer(rt, starts), pointer(rt, xc),
             pointer(rt, perm), pointer(rt, group), pointer(rt, marks), ctypes.c_int64(n)])
    _launch(rt, "unique_counts<int64_t>", _COMMON, count,
            [pointer(rt, counts), pointer(rt, starts), *i64(count, n)])
    return values, first, inverse, counts


def isin(x1: Array, x2: Array, dtype: DType, invert: bool) -> Array:
    rt = x1.device.runtime
    a1, a2 = memory.contiguous(x1, dtype), memory.contiguous(x2, dtype)
    _check_size("isin", a2.size)
    if a2.size == 0 or a1.size == 0:
        return memory.full(x1.shape, invert, dtypes.bool, x1.device)
    s = _sorted(rt, a2._view((a2.size,), (1,), a2.offset), 0)
    out = rt.empty(x1.shape, dtypes.bool)
    _launch(rt, f"isin_sorted<{dtype.c_type}>", _group(dtype), a1.size,
            [pointer(rt, out), pointer(rt, a1), ctypes.c_int64(a1.size), pointer(rt, s), ctypes.c_int64(s.size),
             ctypes.c_int32(invert)])
    return out


def searchsorted(x1: Array, x2: Array, dtype: DType, side: str, sorter: Array | None) -> Array:
    rt = x1.device.runtime
    a, v = memory.contiguous(x1, dtype), memory.contiguous(x2, dtype)
    out = rt.empty(x2.shape, dtypes.DEFAULT_INDEX)
    if v.size == 0:
        return out
    order = None if sorter is None else memory.contiguous(sorter, dtypes.DEFAULT_INDEX)
    _launch(rt, f"searchsorted<{dtype.c_type}>", _group(dtype), v.size,
            [pointer(rt, out), pointer(rt, a), ctypes.c_int64(a.size), ptr_or_null(rt, order), pointer(rt, v),
             ctypes.c_int64(v.size), ctypes.c_int32(side == "right")])
    return out


sorting.SORT["gpu"] = sort
sorting.ARGSORT["gpu"] = argsort
sets.UNIQUE["gpu"] = unique
sets.ISIN["gpu"] = isin
searching.SEARCHSORTED["gpu"] = searchsorted
