"""Fill and strided cast-copy on the GPU: the kernels of ``rocm_array_kernels/copy/copy.hip``, chosen
by layout after merging dimensions (platform neutral).

- same dtype, both contiguous: a device-to-device memcpy;
- both contiguous: ``copy_contiguous`` (vector loads and stores);
- 2-D where the source is fast along one axis and the destination along the
  other: ``copy_transpose`` (tiles through shared memory);
- anything else, broadcast sources included (stride 0): ``copy_strided``.
"""

from __future__ import annotations

import ctypes
import functools
from typing import TYPE_CHECKING

from ..broadcast import broadcast_view
from ..dtypes import ALL, DType
from ..hookspecs import KernelSource
from ..launch import BLOCK, Family, address, grid_1d, i64, ptr
from ..runtime.layout import (MAX_DIMS, MAX_GRID_Y, TILE, TILE_ROWS, TILE_THREADS, crosses, geometry, merge_dims,
                              scalar_arg)
from . import empty, overlaps, same_elements

if TYPE_CHECKING:
    from ..array import Array

__all__ = ["COPIES", "kernel_sources", "fill", "copy"]

COPIES = Family("copy/copy.hip", {"RA_TILE": TILE, "RA_TILE_ROWS": TILE_ROWS}, {"copy_transpose": TILE_THREADS})


@functools.lru_cache(maxsize=1)
def _fill_names() -> tuple[str, ...]:
    return tuple(f"fill<{t.c_type}>" for t in ALL)


@functools.lru_cache(maxsize=None)
def _copy_names(src: DType) -> tuple[str, ...]:
    """Every copy kernel reading ``src``: compiled as one program, the first time one is needed."""
    return tuple(f"{k}<{src.c_type}, {d.c_type}>" for d in ALL
                 for k in ("copy_contiguous", "copy_strided", "copy_transpose"))


def kernel_sources() -> list[KernelSource]:
    """Every program the copies compile, grouped as they are at run time."""
    return COPIES.sources([_fill_names(), *(_copy_names(s) for s in ALL)])


def _launch_copy(kind: str, dst: Array, src: Array, grid: tuple[int, int, int], block: tuple[int, int, int],
                 args: list[object]) -> None:
    name = f"{kind}<{src.dtype.c_type}, {dst.dtype.c_type}>"
    COPIES.launch(dst.device, name, _copy_names(src.dtype), grid, block, args)


def fill(x: Array, value: bool | int | float | complex) -> None:
    """Every element of ``x`` set to ``value`` (converted as NumPy assigns it)."""
    if x.size == 0:
        return
    arg = scalar_arg(x.dtype, value)
    if not x.is_contiguous:
        one = empty((), x.dtype, x.device)
        fill(one, value)
        copy(x, one)
    elif not any(bytes(arg)):
        x.device.runtime.memset(address(x), 0, x.size * x.dtype.itemsize)
    else:
        n = x.size
        COPIES.launch(x.device, f"fill<{x.dtype.c_type}>", _fill_names(), grid_1d(n, x.device), (BLOCK, 1, 1),
                      [ptr(x), ctypes.c_int64(n), arg])


def copy(dst: Array, src: Array) -> None:
    """``dst[...] = src``: src broadcast to dst's shape and cast to dst's dtype, any strides."""
    src = broadcast_view(src, dst.shape)
    if dst.size == 0:
        return
    if overlaps(dst, src):
        if dst.dtype == src.dtype and same_elements(dst, src):
            return  # the same elements: nothing to do
        tmp = empty(src.shape, src.dtype, src.device)  # copy as if through a temporary
        copy(tmp, src)
        src = tmp
    shape, (ds, ss) = merge_dims(dst.shape, dst.strides, src.strides)
    if len(shape) > MAX_DIMS:
        # Rare: more dimensions than a kernel takes even after merging; one launch per outer index.
        d, s = dst._view(shape, ds, dst.offset), src._view(shape, ss, src.offset)
        for i in range(shape[0]):
            copy(d._view(shape[1:], ds[1:], d.offset + i * ds[0]), s._view(shape[1:], ss[1:], s.offset + i * ss[0]))
        return
    dp, sp = ptr(dst), ptr(src)
    if len(shape) == 1 and ds[0] == 1 and ss[0] == 1:
        n = shape[0]
        if dst.dtype is src.dtype:
            dst.device.runtime.memcpy(address(dst), address(src), n * dst.dtype.itemsize)
        else:
            _launch_copy("copy_contiguous", dst, src, grid_1d(n, dst.device, per_thread=4), (BLOCK, 1, 1),
                         [dp, sp, ctypes.c_int64(n)])
        return
    if len(shape) == 2:
        if crosses(ds[::-1], ss[::-1]):  # make the source fast along axis 0
            shape, ds, ss = shape[::-1], ds[::-1], ss[::-1]
        if crosses(ds, ss):
            rows, cols = shape
            grid = (min(-(-cols // TILE), MAX_GRID_Y), min(-(-rows // TILE), MAX_GRID_Y), 1)
            _launch_copy("copy_transpose", dst, src, grid, (TILE, COPIES.value(dst.device, "RA_TILE_ROWS"), 1),
                         [dp, sp, *i64(rows, cols, ss[0], ss[1], ds[0], ds[1])])
            return
    n = 1
    for m in shape:
        n *= m
    _launch_copy("copy_strided", dst, src, grid_1d(n, dst.device), (BLOCK, 1, 1),
                 [dp, sp, ctypes.c_int64(n), geometry(shape, ds, ss)])
