"""The gpu backs of indexing (``backs.GATHER``, ``SCATTER``, ``MASK_INDICES``).

The kernels are those of ``rocm_array_kernels/indexing/indexing.hip``. Index arrays are checked on
the device while their element offsets are computed; the host reads the flag (one
synchronization) and raises IndexError naming the axis, before anything is written.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from rocm_array import dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.devices import Device
from rocm_array.dtypes import ALL
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, grid_1d, ptr
from rocm_array.runtime.layout import MAX_DIMS, geometry, merge_dims

from . import backs
from .table import BY_NAME

#: A mask block of _MASK_BLOCK threads counts _MASK_ITEMS elements each. x[x > 0.5] of 2^26 float32
#: on an H200: 1159 us at 256x8, 1165-1356 at 256x16 (from process to process), 1767 at 256x32, 1231
#: at 512x16.
_MASK_BLOCK, _MASK_ITEMS = 256, 16
INDEXING = Family("indexing/indexing.hip", {"RA_MASK_BLOCK": _MASK_BLOCK, "RA_MASK_ITEMS": _MASK_ITEMS},
                  {"mask_count": "RA_MASK_BLOCK", "mask_positions": "RA_MASK_BLOCK"})
_OFFSETS, _MASK_COUNT, _MASK_POSITIONS = "index_offsets<int64_t>", "mask_count<bool>", "mask_positions<bool>"
NAMES = (_OFFSETS, _MASK_COUNT, _MASK_POSITIONS, *(f"{k}<{d.c_type}>" for d in ALL for k in ("gather", "scatter")))
_MASK_CHUNK = _MASK_BLOCK * _MASK_ITEMS
_MASK_THREADS = (_MASK_BLOCK, 1, 1)
_THREADS = (BLOCK, 1, 1)


def kernel_sources() -> list[KernelSource]:
    return INDEXING.sources([NAMES])


def _launch(x: Array, name: str, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[object]) -> None:
    INDEXING.launch(x.device, name, NAMES, grid, block, args)


def _offsets(v: Array, indices: list[Array], shape: tuple[int, ...], in_bounds: bool) -> Array:
    """The element offset in ``v`` of each index tuple (int64, shape's size); IndexError when out of
    range, unless ``in_bounds`` says they are not (the flag is then not read: no synchronization)."""
    k, m = len(indices), math.prod(shape)
    sole = indices[0] if k == 1 else None
    if sole is not None and sole.dtype is dtypes.int64 and sole.is_contiguous:
        idx = sole  # one index array already laid out as the kernel reads it (a mask's positions)
    else:
        idx = memory.empty((k, m), dtypes.int64, v.device)
        for a, i in enumerate(indices):
            memory.copy_into(idx._view(shape, contiguous_strides(shape), a * m), i)
    axes = _axes(v.device, (*v.shape[:k], *v.strides[:k]))
    bad = _unread(v.device) if in_bounds else memory.index_report(v.device)
    offsets = memory.empty((m,), dtypes.int64, v.device)
    _launch(v, _OFFSETS, grid_1d(m, v.device), _THREADS,
            [ptr(offsets), ptr(idx), ctypes.c_int64(m), ctypes.c_int(k), ptr(axes), ptr(bad)])
    tag, value = (0, 0) if in_bounds else memory.reported_index(bad)
    if tag:  # (the axis of the canonical view, which need not be the caller's: its size, not its number)
        raise IndexError(f"index {value} is out of bounds for an axis of size {v.shape[tag - 1]}")
    return offsets


#: Per device: the sizes and strides index_offsets reads, by value (a few dozen kept), and a flag
#: for indices known to be in bounds, which the kernel never sets and nobody reads. Uploading the
#: one and filling the other took a mask's gather two more driver calls and a launch (a fit of
#: scikit-learn's LDA indexes with eight masks).
_AXES: dict[tuple[Device, tuple[int, ...]], Array] = {}
_AXES_KEPT = 64  # (a bound on small device arrays kept; LDA's fit uses 8)


_UNREAD: dict[Device, Array] = {}


def _unread(device: Device) -> Array:
    flag = _UNREAD.get(device)
    if flag is None:
        flag = _UNREAD[device] = memory.index_report(device, zeroed=False)
    return flag


def _axes(device: Device, values: tuple[int, ...]) -> Array:
    key = (device, values)
    axes = _AXES.get(key)
    if axes is None:
        if len(_AXES) >= _AXES_KEPT:
            del _AXES[next(iter(_AXES))]
        axes = _AXES[key] = memory.from_host(np.array(values, np.int64), dtypes.int64, device)
    return axes


def _rest(v: Array, k: int) -> tuple[Array, int, object]:
    """``v`` (made contiguous when its trailing axes merge to more than a kernel takes), the size
    of one trailing block, and that block's geometry."""
    rest_shape = v.shape[k:]
    merged, (strides,) = merge_dims(rest_shape, v.strides[k:])
    if len(merged) > MAX_DIMS:
        v = memory.contiguous(v)
        merged, (strides,) = merge_dims(rest_shape, v.strides[k:])
    return v, math.prod(rest_shape), geometry(merged, strides)


def gather(v: Array, indices: list[Array], shape: tuple[int, ...], in_bounds: bool) -> Array:
    k = len(indices)
    out = memory.empty(shape + v.shape[k:], v.dtype, v.device)
    if out.size == 0 and math.prod(shape) == 0:
        return out
    v, inner, rest = _rest(v, k)  # (the offsets are of this v)
    INDEXING.prepare(v.device, (_OFFSETS, f"gather<{v.dtype.c_type}>"), NAMES)
    offsets = _offsets(v, indices, shape, in_bounds)
    if out.size == 0:
        return out
    m = math.prod(shape)
    _launch(v, f"gather<{v.dtype.c_type}>", grid_1d(out.size, v.device), _THREADS,
            [ptr(out), ptr(v), ptr(offsets), ctypes.c_int64(m), ctypes.c_int64(inner), rest])
    return out


def scatter(v: Array, indices: list[Array], value: Array, in_bounds: bool) -> None:
    k = len(indices)
    shape = indices[0].shape
    m = math.prod(shape)
    if m == 0:
        return
    if memory.overlaps(v, value):  # (x[idx] = x: the kernel would read what it has written)
        value = memory.copy(value)
    INDEXING.prepare(v.device, (_OFFSETS, f"scatter<{v.dtype.c_type}>"), NAMES)
    offsets = _offsets(v, indices, shape, in_bounds)
    rest_size = math.prod(v.shape[k:])
    if rest_size == 0:
        return
    merged, (strides,) = merge_dims(v.shape[k:], v.strides[k:])
    if len(merged) > MAX_DIMS:
        # A view written through cannot be replaced by a copy: one scatter per outer index.
        for i in range(v.shape[k]):
            sub = v._view(v.shape[:k] + v.shape[k + 1:], v.strides[:k] + v.strides[k + 1:],
                          v.offset + i * v.strides[k])
            scatter(sub, indices, value._view(value.shape[:k] + value.shape[k + 1:],
                                              value.strides[:k] + value.strides[k + 1:],
                                              value.offset + i * value.strides[k]), in_bounds)
        return
    value = memory.contiguous(value)
    _launch(v, f"scatter<{v.dtype.c_type}>", grid_1d(m * rest_size, v.device), _THREADS,
            [ptr(v), ptr(value), ptr(offsets), ctypes.c_int64(m), ctypes.c_int64(rest_size), geometry(merged, strides)])


def mask_indices(mask: Array) -> tuple[Array, ...]:
    """The coordinates of the True elements of ``mask``, row-major, one int64 array per axis."""
    mask = memory.contiguous(mask)
    n = mask.size
    if n == 0:
        return tuple(memory.empty((0,), dtypes.int64, mask.device) for _ in mask.shape)
    blocks = -(-n // _MASK_CHUNK)
    if blocks == 0:
        flat = memory.empty((0,), dtypes.int64, mask.device)
    else:
        # (index_offsets too: a mask's positions go on to a gather or scatter)
        INDEXING.prepare(mask.device, (_MASK_COUNT, _MASK_POSITIONS, _OFFSETS), NAMES)
        counts = memory.empty((blocks,), dtypes.int64, mask.device)
        _launch(mask, _MASK_COUNT, (blocks, 1, 1), _MASK_THREADS, [ptr(counts), ptr(mask), ctypes.c_int64(n)])
        per_block = memory.to_host(counts)
        ends = np.cumsum(per_block)
        starts = memory.from_host(ends - per_block, dtypes.int64, mask.device)
        flat = memory.empty((int(ends[-1]),), dtypes.int64, mask.device)
        _launch(mask, _MASK_POSITIONS, (blocks, 1, 1), _MASK_THREADS,
                [ptr(flat), ptr(mask), ctypes.c_int64(n), ptr(starts)])
    if mask.ndim <= 1:
        return (flat,)
    # Coordinates from flat positions: (flat // inner) % size along each axis.
    out = []
    inner = n
    for d, size in enumerate(mask.shape):
        inner //= size
        c = BY_NAME["floor_divide"](flat, inner) if inner > 1 else flat
        out.append(c if d == 0 else BY_NAME["remainder"](c, size))
    return tuple(out)


def register() -> None:
    """Fill the ``gpu`` column of the indexing tables."""
    backs.GATHER["gpu"], backs.SCATTER["gpu"], backs.MASK_INDICES["gpu"] = gather, scatter, mask_indices
