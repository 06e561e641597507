"""Fill and strided cast-copy on the GPU: the kernels of ``rocm_array_kernels/copy/copy.hip``, chosen
by layout after merging dimensions (platform neutral), once for each kind of copy (``_CopyPlan``).

- same dtype, both contiguous: a device-to-device memcpy;
- both contiguous: ``copy_contiguous`` (vector loads and stores);
- 2-D where the source is fast along one axis and the destination along the
  other: ``copy_transpose`` (tiles through shared memory);
- anything else, broadcast sources included (stride 0): ``copy_strided``.
"""

from __future__ import annotations

import ctypes
import functools
from typing import TYPE_CHECKING, Any, NamedTuple

from ..broadcast import broadcast_view
from ..dtypes import ALL, DType
from ..hookspecs import KernelSource
from ..launch import BLOCK, Family, address, grid_1d, kept, ptr
from ..runtime.layout import (MAX_DIMS, MAX_GRID_Y, TILE, TILE_ROWS, TILE_THREADS, crosses, geometry, merge_dims,
                              scalar_arg)
from ..runtime.launcher import Launcher
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


class _CopyPlan(NamedTuple):
    """A copy between two layouts of two dtypes (``_copy_plan``), resolved once: its kernel's launcher
    (None: a memcpy of ``tail[0]`` bytes), the grid, and the arguments after the two addresses."""

    launch: Launcher | None
    grid: tuple[int, int, int]
    tail: tuple[Any, ...]


#: (runtime, the destination's and the source's dtypes, the shape, the destination's and the source's
#: strides) -> the plan of that copy. Without one, each copy merged the dimensions, built the geometry
#: and made every argument a ctypes value: the write of a Jacobi sweep's interior,
#: ``u[1:-1, 1:-1] = v`` (a contiguous 126x126 float32 into a strided view), took 203,207 instructions
#: over a recording driver, 80,932 with it, setitem's short path for slices and the one walk of ``_span``
#: (``.diag/cg_rows.sh``).
_COPIES: dict[tuple[Any, ...], _CopyPlan] = {}


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
    key = (dst._device._runtime, dst._dtype, src._dtype, dst._shape, dst._strides, src._strides)
    plan = _COPIES.get(key)
    if plan is None:
        shape, (ds, ss) = merge_dims(dst.shape, dst.strides, src.strides)
        if len(shape) > MAX_DIMS:
            # Rare: more dimensions than a kernel takes even after merging; one launch per outer index.
            d, s = dst._view(shape, ds, dst.offset), src._view(shape, ss, src.offset)
            for i in range(shape[0]):
                copy(d._view(shape[1:], ds[1:], d.offset + i * ds[0]),
                     s._view(shape[1:], ss[1:], s.offset + i * ss[0]))
            return
        plan = kept(_COPIES, key, _copy_plan(dst, src, shape, ds, ss))
    if plan.launch is None:
        dst._device.runtime.memcpy(address(dst), address(src), plan.tail[0])
    else:
        plan.launch(plan.grid, (address(dst), address(src), *plan.tail))


def _copy_plan(dst: Array, src: Array, shape: tuple[int, ...], ds: tuple[int, ...], ss: tuple[int, ...]) -> _CopyPlan:
    """The plan of copying ``src`` into ``dst`` (of one shape), their dimensions merged into ``shape``
    with the strides ``ds`` and ``ss`` (at most MAX_DIMS)."""
    device = dst.device

    def launcher(kind: str, argtypes: list[Any], block: tuple[int, int, int]) -> Launcher:
        name = f"{kind}<{src.dtype.c_type}, {dst.dtype.c_type}>"
        return COPIES.launcher(device, name, _copy_names(src.dtype), [ctypes.c_void_p] * 2 + argtypes, block)

    if len(shape) == 1 and ds[0] == 1 and ss[0] == 1:
        n = shape[0]
        if dst.dtype is src.dtype:
            return _CopyPlan(None, (0, 0, 0), (n * dst.dtype.itemsize,))
        return _CopyPlan(launcher("copy_contiguous", [ctypes.c_int64], (BLOCK, 1, 1)),
                         grid_1d(n, device, per_thread=4), (n,))
    if len(shape) == 2:
        if crosses(ds[::-1], ss[::-1]):  # make the source fast along axis 0
            shape, ds, ss = shape[::-1], ds[::-1], ss[::-1]
        if crosses(ds, ss):
            rows, cols = shape
            grid = (min(-(-cols // TILE), MAX_GRID_Y), min(-(-rows // TILE), MAX_GRID_Y), 1)
            return _CopyPlan(launcher("copy_transpose", [ctypes.c_int64] * 6,
                                      (TILE, COPIES.value(device, "RA_TILE_ROWS"), 1)),
                             grid, (rows, cols, ss[0], ss[1], ds[0], ds[1]))
    n = 1
    for m in shape:
        n *= m
    g = geometry(shape, ds, ss)
    return _CopyPlan(launcher("copy_strided", [ctypes.c_int64, type(g)], (BLOCK, 1, 1)), grid_1d(n, device),
                     (n, bytes(g)))
