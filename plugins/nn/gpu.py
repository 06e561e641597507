"""The gpu backs of the nn plugin: the vendor library where it takes the work, else own kernels.

Convolutions and pooling go to cuDNN (nvidia) or MIOpen (amd) through
``rocm_array.runtime.dnn`` unless ``ROCM_ARRAY_NN_VENDOR=0``, no library loads, or
it refuses the shape (``dnn.Unsupported``). The own path: im2col (``kernels/nn/conv.hip``)
and the namespace's ``matmul`` (the linalg plugin's GEMM), col2im for the transposed
forms, and direct pooling kernels. Everything else is own kernels: pointwise
functors, one block per row for softmax and the norms, gather/scatter with the
index checked on the device.

Instantiations: per float dtype for the arithmetic kernels; per element width for
the kernels that only move elements (gather, scatter, upsample).
"""

from __future__ import annotations

import ctypes
import functools
from typing import TYPE_CHECKING, Any, Sequence

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.hookspecs import KernelSource
from rocm_array.namespace import TABLE
from rocm_array.runtime import dnn
from rocm_array.runtime.layout import BLOCK, geometry, grid_1d, merge_dims

from . import conv as conv_front
from . import index as index_front
from . import pointwise as pointwise_front
from . import pool as pool_front
from . import rows as rows_front
from .common import flat_view, vendor_enabled

if TYPE_CHECKING:
    from rocm_array.runtime.gpu import GpuRuntime

    from .conv import ConvSpec
    from .pointwise import Pointwise
    from .pool import PoolSpec

__all__ = ["kernel_sources"]

POINTWISE, ROWS, POOL, CONV, INDEX = (f"nn/{f}.hip" for f in ("pointwise", "rows", "pool", "conv", "index"))
FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
#: The element type a kernel that only moves elements uses for each width.
MOVES = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t", 16: "complex128"}
#: Types ra_atomic_add takes; scatter_add widens the others to these (and narrows back).
ATOMIC = (dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64, dtypes.float32, dtypes.float64)
WIDEN = {dtypes.float16: dtypes.float32, dtypes.bfloat16: dtypes.float32, dtypes.int8: dtypes.int32,
         dtypes.int16: dtypes.int32, dtypes.uint8: dtypes.uint32, dtypes.uint16: dtypes.uint32}


class _Int64s(ctypes.Structure):
    """Base of the kernels' parameter structs: int64 fields in declaration order."""

    @classmethod
    def of(cls, *values: int) -> Any:
        return cls(*values)


class NnPool(_Int64s):
    _fields_ = [(f, ctypes.c_int64) for f in ("planes", "h", "w", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw")]


class NnConv(_Int64s):
    _fields_ = [(f, ctypes.c_int64) for f in
                ("n", "c", "ih", "iw", "gh", "gw", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")]


# -- instantiations ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _groups() -> dict[str, dict[str, tuple[str, ...]]]:
    """source -> group key -> the names compiled together (a float dtype's, or one family's)."""
    out: dict[str, dict[str, tuple[str, ...]]] = {POINTWISE: {}, ROWS: {}, POOL: {}, CONV: {}, INDEX: {}}
    for t in FLOATS:
        c = t.c_type
        out[POINTWISE][c] = tuple(f"pointwise<{r.functor}, {c}>" for r in pointwise_front.ROWS)
        out[ROWS][c] = tuple(f"{k}<{c}, {b}>" for k in ("softmax_rows", "norm_rows") for b in ("false", "true"))
        out[POOL][c] = (f"pool2d<{c}, true>", f"pool2d<{c}, false>")
        out[CONV][c] = (f"im2col<{c}>", f"col2im<{c}>")
    out[POOL]["move"] = tuple(f"upsample_nearest<{m}>" for m in MOVES.values())
    out[INDEX]["move"] = tuple(n for m in MOVES.values() for n in (f"gather<{m}>", f"scatter<{m}, false>"))
    out[INDEX]["add"] = tuple(f"scatter<{t.c_type}, true>" for t in ATOMIC)
    return out


def kernel_sources() -> list[KernelSource]:
    """Every program the gpu backs compile, grouped as they are at run time."""
    return [KernelSource(path, names) for path, groups in _groups().items() for names in groups.values()]


def _launch(rt: GpuRuntime, path: str, group: str, name: str, n: int, args: Sequence[Any],
            block: int = BLOCK, grid: int | None = None) -> None:
    fn = rt.kernel(path, name, _groups()[path][group])
    blocks = grid if grid is not None else grid_1d(n, rt.properties.compute_units)
    rt.launch(fn, (blocks, 1, 1), (block, 1, 1), list(args))


def _p(rt: GpuRuntime, x: Array | None) -> ctypes.c_void_p:
    return ctypes.c_void_p(None if x is None else rt.pointer(x))


def _i64(*values: int) -> list[ctypes.c_int64]:
    return [ctypes.c_int64(v) for v in values]


# -- pointwise and rows ------------------------------------------------------------------------------
def pointwise(row: Pointwise, x: Array, a: float, b: float) -> Array:
    rt = x.device.runtime
    out = rt.empty(x.shape, x.dtype)
    if x.size:
        c = x.dtype.c_type
        _launch(rt, POINTWISE, c, f"pointwise<{row.functor}, {c}>", x.size,
                [_p(rt, out), _p(rt, x), *_i64(x.size), ctypes.c_double(a), ctypes.c_double(b)])
    return out


def _rows(rt: GpuRuntime, rows: int, n: int) -> tuple[int, int]:
    """(block, grid) of a row kernel: one block per row (grid-striding), as many threads as the
    row keeps busy (a multiple of the wave, at most 1024)."""
    block = rt.properties.wave_size
    while block < 1024 and block * 8 < n:
        block *= 2
    return block, min(rows, rt.properties.compute_units * (2048 // block) * 4)


def softmax(x: Array, log: bool) -> Array:
    rt = x.device.runtime
    rows, n = x.shape
    out = rt.empty(x.shape, x.dtype)
    block, grid = _rows(rt, rows, n)
    _launch(rt, ROWS, x.dtype.c_type, f"softmax_rows<{x.dtype.c_type}, {'true' if log else 'false'}>", rows,
            [_p(rt, out), _p(rt, x), *_i64(rows, n)], block=block, grid=grid)
    return out


def norm(x: Array, weight: Array | None, bias: Array | None, eps: float, rms: bool) -> Array:
    rt = x.device.runtime
    rows, n = x.shape
    out = rt.empty(x.shape, x.dtype)
    block, grid = _rows(rt, rows, n)
    _launch(rt, ROWS, x.dtype.c_type, f"norm_rows<{x.dtype.c_type}, {'true' if rms else 'false'}>", rows,
            [_p(rt, out), _p(rt, x), _p(rt, weight), _p(rt, bias), *_i64(rows, n), ctypes.c_double(eps)],
            block=block, grid=grid)
    return out


# -- convolutions and pooling ---------------------------------------------------------------------------
def _vendor(rt: GpuRuntime) -> dnn.Dnn | None:
    return dnn.library(rt) if vendor_enabled() else None


def conv(spec: ConvSpec, x: Array, w: Array) -> Array:
    rt = x.device.runtime
    y = rt.empty((spec.n, spec.k, spec.oh, spec.ow), x.dtype)
    lib = _vendor(rt)
    if lib is not None:
        try:
            lib.convolution(y, x, w, (spec.sh, spec.sw), (spec.ph, spec.pw), (spec.dh, spec.dw), spec.groups,
                            spec.transposed)
            return y
        except dnn.Unsupported:
            pass
    g, c = spec.groups, x.dtype.c_type
    ch, ih, iw, gh, gw = spec.image_grid
    taps = spec.kh * spec.kw
    geo = NnConv.of(spec.n, ch, ih, iw, gh, gw, spec.kh, spec.kw, spec.sh, spec.sw, spec.ph, spec.pw,
                    spec.dh, spec.dw)
    if not spec.transposed:  # y[n, g] = w[g] @ cols[n, g]
        cg = spec.c // g
        cols = rt.empty((spec.n, spec.c * taps, gh * gw), x.dtype)
        _launch(rt, CONV, c, f"im2col<{c}>", cols.size, [_p(rt, cols), _p(rt, x), geo])
        prod = TABLE["matmul"](flat_view(w, (g, spec.k // g, cg * taps)), flat_view(cols, (spec.n, g, cg * taps, gh * gw)))
        memory.copy_into(flat_view(y, prod.shape), prod)
        return y
    # transposed: cols[n, g] = w[g]^T @ x[n, g], then every output pixel gathers its columns
    cg, kg = spec.c // g, spec.k // g
    wt = w._view((g, kg * taps, cg), (cg * kg * taps, 1, kg * taps), w.offset)
    cols = memory.contiguous(TABLE["matmul"](wt, flat_view(x, (spec.n, g, cg, spec.ih * spec.iw))), x.dtype)
    _launch(rt, CONV, c, f"col2im<{c}>", y.size, [_p(rt, y), _p(rt, cols), geo])
    return y


def pool(spec: PoolSpec, x: Array, is_max: bool, include_pad: bool) -> Array:
    rt = x.device.runtime
    y = rt.empty((spec.planes, spec.oh, spec.ow), x.dtype)
    lib = _vendor(rt)
    if lib is not None:
        mode = "max" if is_max else "avg_include_pad" if include_pad else "avg_exclude_pad"
        try:
            lib.pooling(flat_view(y, (spec.planes, 1, spec.oh, spec.ow)),
                        flat_view(x, (spec.planes, 1, spec.h, spec.w)),
                        (spec.kh, spec.kw), (spec.sh, spec.sw), (spec.ph, spec.pw), mode)
            return y
        except dnn.Unsupported:
            pass
    c = x.dtype.c_type
    geo = NnPool.of(spec.planes, spec.h, spec.w, spec.oh, spec.ow, spec.kh, spec.kw, spec.sh, spec.sw,
                    spec.ph, spec.pw)
    _launch(rt, POOL, c, f"pool2d<{c}, {'true' if is_max else 'false'}>", y.size,
            [_p(rt, y), _p(rt, x), geo, ctypes.c_int(int(include_pad))])
    return y


def upsample(spec: PoolSpec, x: Array, sh: Any, sw: Any) -> Array:
    rt = x.device.runtime
    y = rt.empty((spec.planes, spec.oh, spec.ow), x.dtype)
    geo = NnPool.of(spec.planes, spec.h, spec.w, spec.oh, spec.ow, 1, 1, 1, 1, 0, 0)
    _launch(rt, POOL, "move", f"upsample_nearest<{MOVES[x.dtype.itemsize]}>", y.size,
            [_p(rt, y), _p(rt, x), geo, ctypes.c_float(sh), ctypes.c_float(sw)])
    return y


# -- gather and scatter ---------------------------------------------------------------------------------
def _checked(rt: GpuRuntime, name: str, size: int, run: Any) -> None:
    """Run ``run(error)`` with a zeroed device flag; IndexError when a kernel set it."""
    error = rt.empty((1,), dtypes.int32)
    rt.memset(error, 0)
    run(ctypes.c_void_p(rt.pointer(error)))
    if memory.to_host(error)[0]:
        raise IndexError(f"nn.{name}(): an index is out of range for a dimension of size {size}")


def _one_d(*xs: Array) -> list[Array]:
    """0-D arrays as 1-D views of one element (the kernels index at least one dimension)."""
    return [x._view((1,), (1,), x.offset) if x.ndim == 0 else x for x in xs]


def gather(x: Array, index: Array, dim: int) -> Array:
    rt = x.device.runtime
    out = rt.empty(index.shape, x.dtype)
    xv, iv, ov = _one_d(x, index, out)
    strides = list(xv.strides)
    size, step, strides[dim] = xv.shape[dim], strides[dim], 0
    shape, st = merge_dims(iv.shape, ov.strides, strides, iv.strides)
    n = iv.size
    _checked(rt, "gather", size, lambda err: _launch(
        rt, INDEX, "move", f"gather<{MOVES[x.dtype.itemsize]}>", n,
        [_p(rt, ov), _p(rt, xv), _p(rt, iv), *_i64(n), geometry(shape, *st), *_i64(size, step), err]))
    return out


def scatter(out: Array, src: Array, index: Array, dim: int, add: bool) -> None:
    rt = out.device.runtime
    if add and out.dtype in WIDEN:  # accumulate in a type the atomics take, round once
        wide = WIDEN[out.dtype]
        acc = memory.contiguous(out, wide)
        scatter(acc, memory.contiguous(src, wide), index, dim, add)
        memory.copy_into(out, acc)
        return
    ov, sv, iv = _one_d(out, src, index)
    strides = list(ov.strides)
    size, step, strides[dim] = ov.shape[dim], strides[dim], 0
    shape, st = merge_dims(iv.shape, strides, sv.strides, iv.strides)
    name = f"scatter<{out.dtype.c_type}, true>" if add else f"scatter<{MOVES[out.dtype.itemsize]}, false>"
    n = iv.size
    _checked(rt, "scatter", size, lambda err: _launch(
        rt, INDEX, "add" if add else "move", name, n,
        [_p(rt, ov), _p(rt, sv), _p(rt, iv), *_i64(n), geometry(shape, *st), *_i64(size, step), err]))


pointwise_front.POINTWISE["gpu"] = pointwise
rows_front.SOFTMAX["gpu"] = softmax
rows_front.NORM["gpu"] = norm
conv_front.CONV["gpu"] = conv
pool_front.POOL["gpu"] = pool
pool_front.UPSAMPLE["gpu"] = upsample
index_front.GATHER["gpu"] = gather
index_front.SCATTER["gpu"] = scatter
