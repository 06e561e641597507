"""Fill and strided cast-copy on the GPU: the kernels of ``kernels/copy/copy.hip``, chosen
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
from .layout import BLOCK, MAX_DIMS, crosses, geometry, grid_1d, merge_dims, scalar_arg

if TYPE_CHECKING:
    from ..array import Array
    from .gpu import GpuRuntime

__all__ = ["SOURCE", "kernel_sources", "fill", "copy"]

SOURCE = "copy/copy.hip"
_TILE, _TILE_ROWS = 32, 8  # RA_TILE, RA_TILE_ROWS of copy.hip
_MAX_GRID_Y = 65535


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
    return [KernelSource(SOURCE, _fill_names()), *(KernelSource(SOURCE, _copy_names(s)) for s in ALL)]


def _copy_kernel(rt: GpuRuntime, kind: str, src: DType, dst: DType) -> object:
    return rt.kernel(SOURCE, f"{kind}<{src.c_type}, {dst.c_type}>", _copy_names(src))


def fill(rt: GpuRuntime, x: Array, value: bool | int | float | complex) -> None:
    """Every element of ``x`` set to ``value`` (converted as NumPy assigns it)."""
    if x.size == 0:
        return
    arg = scalar_arg(x.dtype, value)
    if not x.is_contiguous:
        one = rt.empty((), x.dtype)
        fill(rt, one, value)
        copy(rt, x, one)
    elif not any(bytes(arg)):
        rt.memset(x, 0)
    else:
        fn = rt.kernel(SOURCE, f"fill<{x.dtype.c_type}>", _fill_names())
        n = x.size
        rt.launch(fn, (grid_1d(n, rt.properties.compute_units), 1, 1), (BLOCK, 1, 1),
                  [ctypes.c_void_p(rt.pointer(x)), ctypes.c_int64(n), arg])


def _span(x: Array) -> tuple[int, int]:
    """The byte range of the buffer ``x`` touches."""
    lo = x.offset + sum((n - 1) * s for n, s in zip(x.shape, x.strides) if s < 0)
    hi = x.offset + sum((n - 1) * s for n, s in zip(x.shape, x.strides) if s > 0) + 1
    return lo * x.dtype.itemsize, hi * x.dtype.itemsize


def _overlap(a: Array, b: Array) -> bool:
    if a._buf is not b._buf:
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def copy(rt: GpuRuntime, dst: Array, src: Array) -> None:
    """``dst[...] = src``: src broadcast to dst's shape and cast to dst's dtype, any strides."""
    src = broadcast_view(src, dst.shape)
    if dst.size == 0:
        return
    if _overlap(dst, src):
        if (dst.dtype, dst.offset, dst.strides) == (src.dtype, src.offset, src.strides):
            return  # the same elements: nothing to do
        tmp = rt.empty(src.shape, src.dtype)  # copy as if through a temporary
        copy(rt, tmp, src)
        src = tmp
    shape, (ds, ss) = merge_dims(dst.shape, dst.strides, src.strides)
    if len(shape) > MAX_DIMS:
        # Rare: more dimensions than a kernel takes even after merging; one launch per outer index.
        d, s = dst._view(shape, ds, dst.offset), src._view(shape, ss, src.offset)
        for i in range(shape[0]):
            copy(rt, d._view(shape[1:], ds[1:], d.offset + i * ds[0]),
                 s._view(shape[1:], ss[1:], s.offset + i * ss[0]))
        return
    dp, sp = ctypes.c_void_p(rt.pointer(dst)), ctypes.c_void_p(rt.pointer(src))
    cu = rt.properties.compute_units
    if len(shape) == 1 and ds[0] == 1 and ss[0] == 1:
        n = shape[0]
        if dst.dtype is src.dtype:
            rt.driver.memcpy(dp.value or 0, sp.value or 0, n * dst.dtype.itemsize, "dtod")
        else:
            fn = _copy_kernel(rt, "copy_contiguous", src.dtype, dst.dtype)
            rt.launch(fn, (grid_1d(n, cu, per_thread=4), 1, 1), (BLOCK, 1, 1), [dp, sp, ctypes.c_int64(n)])
        return
    if len(shape) == 2:
        if crosses(ds[::-1], ss[::-1]):  # make the source fast along axis 0
            shape, ds, ss = shape[::-1], ds[::-1], ss[::-1]
        if crosses(ds, ss):
            rows, cols = shape
            fn = _copy_kernel(rt, "copy_transpose", src.dtype, dst.dtype)
            grid = (min(-(-cols // _TILE), _MAX_GRID_Y), min(-(-rows // _TILE), _MAX_GRID_Y), 1)
            rt.launch(fn, grid, (_TILE, _TILE_ROWS, 1),
                      [dp, sp, *(ctypes.c_int64(v) for v in (rows, cols, ss[0], ss[1], ds[0], ds[1]))])
            return
    n = 1
    for m in shape:
        n *= m
    fn = _copy_kernel(rt, "copy_strided", src.dtype, dst.dtype)
    rt.launch(fn, (grid_1d(n, cu), 1, 1), (BLOCK, 1, 1),
              [dp, sp, ctypes.c_int64(n), geometry(shape, ds, ss)])
