"""The gpu backs of the nn plugin: the vendor library where it takes the work, else own kernels.

Convolutions and pooling go to cuDNN (nvidia) or MIOpen (amd) through
``rocm_array.runtime.dnn`` unless ``ROCM_ARRAY_NN_VENDOR=0``, no library loads, or
it refuses the shape (``dnn.Unsupported``). The own path: im2col (``rocm_array_kernels/nn/conv.hip``)
and the namespace's ``matmul`` (the linalg plugin's GEMM), col2im for the transposed
forms, and direct pooling kernels (vector loads where windows do not overlap). cuDNN
declines pooling (``dnn_nvidia``): pooling is bandwidth-bound and the own kernels ran
faster on an H200, so on nvidia pooling is always the own kernels. Everything else is
own kernels: a block (or a wave) per row for softmax and the norms (rows of up to 128 bytes
per thread held in registers: read once), gather/scatter with the index checked on the
device. (The activations are the elementwise plugin's rows: its kernels run them.)

Instantiations: per float dtype for the arithmetic kernels; per element width for
the kernels that only move elements (gather, scatter, upsample).
"""

from __future__ import annotations

import ctypes
import functools
from typing import TYPE_CHECKING, Any, Sequence

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.devices import Device
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, PerTarget, address, grid_1d, i64, ptr
from rocm_array.runtime import dnn, vendor
from rocm_array.runtime.layout import MAX_DIMS, geometry, merge_dims
from rocm_array.views import flat_view, pick
from rocm_array_plugins.linalg import own as linalg

from . import backs
from .common import vendor_enabled

if TYPE_CHECKING:
    from .front_conv import ConvSpec
    from .front_pool import PoolSpec

__all__ = ["kernel_sources", "held_loads"]

FLOATS = dtypes.REAL_FLOATS
#: The widest access of the kernels' ra_vec, in bytes.
VECTOR_BYTES = 16
#: What of a row each thread of the rows kernels holds in registers: at most HOLD_BYTES, in at most
#: HOLD_LOADS loads. NVIDIA: 128 in 16 (at 32 scalar loads per thread NVRTC kept the values in local
#: memory). AMD: 64 in 8. A block of 1024 threads leaves a lane 128 VGPRs on gfx90a, gfx942 (4 waves
#: of 64 a SIMD) and gfx1030 (8 of 32): at 128 bytes in 16 loads hiprtc spilled 13 to 104 VGPRs of
#: the rows kernels to scratch there; at 64 in 8 none spill on CDNA (96 to 110 VGPRs), but norm_rows of
#: 16-bit floats in 16-byte vectors still spilled 13 to 17 on gfx1030; at 32 bytes in 8 loads on RDNA,
#: 109 VGPRs (at 48, 125). Not timed on AMD.
HOLD_BYTES, HOLD_LOADS = PerTarget(nvidia=128, cdna=64, rdna=32), PerTarget(nvidia=16, cdna=8, rdna=8)
POOL, CONV, INDEX = (Family(f"nn/{f}.hip") for f in ("pool", "conv", "index"))
#: The most threads a block of the rows kernels has: a row of a block, up to the most a block holds.
ROWS_BLOCK = 1024
ROWS = Family("nn/rows.hip", {"NN_HOLD_BYTES": HOLD_BYTES, "NN_HOLD_LOADS": HOLD_LOADS, "NN_ROWS_BLOCK": ROWS_BLOCK},
              dict.fromkeys(("softmax_rows", "norm_rows"), "NN_ROWS_BLOCK"))


def held_loads(device: Device, itemsize: int, v: int) -> int:
    """The loads of ``v`` elements of ``itemsize`` bytes in which a thread of the rows kernels holds its
    share of a row on ``device`` (NnHeld's LOADS)."""
    return min(ROWS.value(device, "NN_HOLD_LOADS"), ROWS.value(device, "NN_HOLD_BYTES") // (v * itemsize))
#: The windows (kernel == stride, no padding) pool2d_tiled is built for.
TILED = (2, 3)
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
def _groups() -> dict[Family, dict[str, tuple[str, ...]]]:
    """family -> group key -> the names compiled together (a float dtype's, or one family's)."""
    out: dict[Family, dict[str, tuple[str, ...]]] = {ROWS: {}, POOL: {}, CONV: {}, INDEX: {}}
    for t in FLOATS:
        c = t.c_type
        for v in (1, VECTOR_BYTES // t.itemsize):
            out[ROWS][f"{c}/{v}"] = tuple(f"{k}<{c}, {b}, {v}>" for k in ("softmax_rows", "norm_rows")
                                          for b in ("false", "true"))
        out[POOL][c] = (f"pool2d<{c}, true>", f"pool2d<{c}, false>")
        for v in _widths(t):
            out[POOL][f"{c}/{v}"] = tuple(f"pool2d_tiled<{c}, {b}, {k}, {v}>" for k in TILED
                                          for b in ("true", "false"))
        out[CONV][c] = (f"im2col<{c}>", f"col2im<{c}>")
    out[POOL]["move"] = tuple(f"upsample_nearest<{m}>" for m in MOVES.values())
    out[INDEX]["move"] = tuple(n for m in MOVES.values() for n in (f"gather<{m}>", f"scatter<{m}, false>"))
    out[INDEX]["add"] = tuple(f"scatter<{t.c_type}, true>" for t in ATOMIC)
    return out


def kernel_sources() -> list[KernelSource]:
    """Every program the gpu backs compile, grouped as they are at run time."""
    return [ks for family, groups in _groups().items() for ks in family.sources(groups.values())]


def _widths(dtype: dtypes.DType) -> tuple[int, ...]:
    """The vector widths (elements, widest first, at least 2) pool2d_tiled is built for."""
    return tuple(v for v in (8, 4, 2) if v * dtype.itemsize <= VECTOR_BYTES)


def _aligned(v: int, sizes: Sequence[int], arrays: Sequence[Array | None]) -> bool:
    """Whether vectors of ``v`` elements tile every row of ``sizes`` elements and every array's start."""
    return (all(s % v == 0 for s in sizes)
            and all(a is None or address(a) % (v * a.dtype.itemsize) == 0 for a in arrays))


def _launch(device: Device, family: Family, group: str, name: str, n: int, args: Sequence[Any],
            block: int = BLOCK, grid: int | None = None, block_y: int = 1) -> None:
    blocks = grid_1d(n, device) if grid is None else (grid, 1, 1)
    family.launch(device, name, _groups()[family][group], blocks, (block, block_y, 1), list(args))


# -- rows ----------------------------------------------------------------------------------------------
def _row_kernel(device: Device, kernel: str, flag: bool, x: Array, out: Array, args: Sequence[Any],
                *params: Array | None) -> None:
    """Launch ``kernel<T, flag, V>`` over the rows of x: 16-byte vectors where the rows and arrays
    allow; per row, the fewest threads that hold it in registers, so that it is read once: a power
    of two up to the wave (256 // that rows per block), else a multiple of the wave, at most 1024
    (a row per block). More rows in flight overlap one row's reductions with others' loads: 256
    threads per row ran 1.3x faster than 512 on an 8192-wide float32 softmax, and 4 lanes per
    128-wide row faster than 8. Grid-striding over rows."""
    rows, n = x.shape
    c, wave = x.dtype.c_type, device.runtime.properties.wave_size
    v = _row_width(x, (out, *params))
    threads = -(-n // (held_loads(device, x.dtype.itemsize, v) * v))
    if threads <= wave:
        block = 1 << (threads - 1).bit_length()
        per_block = 256 // block
    else:
        block, per_block = min(ROWS_BLOCK, -(-threads // wave) * wave), 1
    # At most 8 rounds of the blocks a compute unit holds (2048 threads): softmax of 8192^2 float32 on an
    # H200 took 151, 145, 142 and 139 us at 1, 2, 8 and 32 rounds; layer_norm of 2^16 x 1024 143, 153,
    # 140 and 145 us.
    grid = min(-(-rows // per_block), device.runtime.properties.compute_units * (2048 // (block * per_block)) * 8)
    _launch(device, ROWS, f"{c}/{v}", f"{kernel}<{c}, {'true' if flag else 'false'}, {v}>", rows,
            [ptr(out), ptr(x), *(ptr(a) for a in params), *i64(rows, n), *args],
            block=block, grid=grid, block_y=per_block)


def _row_width(x: Array, others: Sequence[Array | None]) -> int:
    """The row kernels' vector width for the rows of x: 16 bytes where every row and array is
    aligned to them, else 1."""
    v = VECTOR_BYTES // x.dtype.itemsize
    return v if _aligned(v, (x.shape[-1],), (x, *others)) else 1


def softmax(x: Array, log: bool) -> Array:
    out = memory.empty(x.shape, x.dtype, x.device)
    _row_kernel(x.device, "softmax_rows", log, x, out, ())
    return out


def norm(x: Array, weight: Array | None, bias: Array | None, eps: float, rms: bool) -> Array:
    out = memory.empty(x.shape, x.dtype, x.device)
    _row_kernel(x.device, "norm_rows", rms, x, out, (ctypes.c_double(eps),), weight, bias)
    return out


# -- convolutions and pooling ---------------------------------------------------------------------------
def _vendor(device: Device) -> dnn.Dnn | None:
    """The device's cuDNN or MIOpen, unless turned off (own kernels, as asked) or unavailable (own
    kernels, said once: ``vendor.fallback``)."""
    if not vendor_enabled():
        return None
    try:
        return vendor.library("dnn", device.runtime)  # type: ignore[no-any-return]
    except vendor.VendorUnavailable as exc:
        vendor.fallback("xp.nn's convolutions and pooling", str(exc))
        return None


def _tensor(x: Array) -> dnn.Tensor:
    return dnn.Tensor(address(x), x.shape, x.strides, x.dtype)


def conv(spec: ConvSpec, x: Array, w: Array) -> Array:
    device = x.device
    y = memory.empty((spec.n, spec.k, spec.oh, spec.ow), x.dtype, device)
    lib = _vendor(device)
    if lib is not None:
        try:
            lib.convolution(_tensor(y), _tensor(x), _tensor(w), (spec.sh, spec.sw), (spec.ph, spec.pw),
                            (spec.dh, spec.dw), spec.groups, spec.transposed)
            return y
        except dnn.Unsupported as exc:
            vendor.fallback(f"a {x.dtype.name} convolution", f"the library declines it: {exc}")
    g, c = spec.groups, x.dtype.c_type
    ch, ih, iw, gh, gw = spec.image_grid
    taps = spec.kh * spec.kw
    geo = NnConv.of(spec.n, ch, ih, iw, gh, gw, spec.kh, spec.kw, spec.sh, spec.sw, spec.ph, spec.pw,
                    spec.dh, spec.dw)
    if not spec.transposed:  # y[n, g] = w[g] @ cols[n, g]
        cg = spec.c // g
        cols = memory.empty((spec.n, spec.c * taps, gh * gw), x.dtype, device)
        _launch(device, CONV, c, f"im2col<{c}>", cols.size, [ptr(cols), ptr(x), geo])
        prod = linalg("matmul")(flat_view(w, (g, spec.k // g, cg * taps)), flat_view(cols, (spec.n, g, cg * taps, gh * gw)))
        memory.copy_into(flat_view(y, prod.shape), prod)
        return y
    # transposed: cols[n, g] = w[g]^T @ x[n, g], then every output pixel gathers its columns
    cg, kg = spec.c // g, spec.k // g
    wt = w._view((g, kg * taps, cg), (cg * kg * taps, 1, kg * taps), w.offset)
    cols = memory.contiguous(linalg("matmul")(wt, flat_view(x, (spec.n, g, cg, spec.ih * spec.iw))), x.dtype)
    _launch(device, CONV, c, f"col2im<{c}>", y.size, [ptr(y), ptr(cols), geo])
    return y


def pool(spec: PoolSpec, x: Array, is_max: bool, include_pad: bool) -> Array:
    device = x.device
    y = memory.empty((spec.planes, spec.oh, spec.ow), x.dtype, device)
    lib = _vendor(device)
    if lib is not None:
        mode = "max" if is_max else "avg_include_pad" if include_pad else "avg_exclude_pad"
        try:
            lib.pooling(_tensor(flat_view(y, (spec.planes, 1, spec.oh, spec.ow))),
                        _tensor(flat_view(x, (spec.planes, 1, spec.h, spec.w))),
                        (spec.kh, spec.kw), (spec.sh, spec.sw), (spec.ph, spec.pw), mode)
            return y
        except dnn.Unsupported:
            pass
    c, flag = x.dtype.c_type, "true" if is_max else "false"
    geo = NnPool.of(spec.planes, spec.h, spec.w, spec.oh, spec.ow, spec.kh, spec.kw, spec.sh, spec.sw,
                    spec.ph, spec.pw)
    v = _tiled_width(spec, x, y)
    if v:
        _launch(device, POOL, f"{c}/{v}", f"pool2d_tiled<{c}, {flag}, {spec.kh}, {v}>", y.size // v,
                [ptr(y), ptr(x), geo])
    else:
        _launch(device, POOL, c, f"pool2d<{c}, {flag}>", y.size,
                [ptr(y), ptr(x), geo, ctypes.c_int(int(include_pad))])
    return y


def _tiled_width(spec: PoolSpec, x: Array, y: Array) -> int:
    """The vector width pool2d_tiled takes this problem with (0: the general kernel's): windows
    of a built size that neither overlap nor pad, 32-bit indices, vector-aligned rows."""
    if not (spec.kh == spec.kw == spec.sh == spec.sw in TILED and spec.ph == spec.pw == 0 and x.size < 2**31):
        return 0
    return next((v for v in _widths(x.dtype) if _aligned(v, (spec.w, spec.ow), (x, y))), 0)


def upsample(spec: PoolSpec, x: Array, sh: Any, sw: Any) -> Array:
    device = x.device
    y = memory.empty((spec.planes, spec.oh, spec.ow), x.dtype, device)
    geo = NnPool.of(spec.planes, spec.h, spec.w, spec.oh, spec.ow, 1, 1, 1, 1, 0, 0)
    _launch(device, POOL, "move", f"upsample_nearest<{MOVES[x.dtype.itemsize]}>", y.size,
            [ptr(y), ptr(x), geo, ctypes.c_float(sh), ctypes.c_float(sw)])
    return y


# -- gather and scatter ---------------------------------------------------------------------------------
def _checked(device: Device, name: str, size: int, run: Any) -> None:
    """Run ``run(report)`` with a zeroed report (common/indexing.h: ra_report_index); IndexError
    naming the index when a kernel reported one (the cpu back's message)."""
    report = memory.index_report(device)
    run(ptr(report))
    tag, value = memory.reported_index(report)
    if tag:
        raise IndexError(f"nn.{name}(): index {value} is out of range for a dimension of size {size}")


def _one_d(*xs: Array) -> list[Array]:
    """0-D arrays as 1-D views of one element (the kernels index at least one dimension)."""
    return [x._view((1,), (1,), x.offset) if x.ndim == 0 else x for x in xs]


def _outer(dim: int) -> int:
    """The axis to loop over when the operands' layouts merge to more dimensions than a kernel
    takes (views of 9 or more dimensions): any but ``dim``, each pass one dimension fewer."""
    return 1 if dim == 0 else 0


def gather(x: Array, index: Array, dim: int, name: str) -> Array:
    out = memory.empty(index.shape, x.dtype, x.device)
    _gather(out, x, index, dim, name)
    return out


def _gather(out: Array, x: Array, index: Array, dim: int, name: str) -> None:
    device = x.device
    xv, iv, ov = _one_d(x, index, out)
    strides = list(xv.strides)
    size, step, strides[dim] = xv.shape[dim], strides[dim], 0
    shape, st = merge_dims(iv.shape, ov.strides, strides, iv.strides)
    if len(shape) > MAX_DIMS:
        a = _outer(dim)
        for i in range(index.shape[a]):
            _gather(pick(out, a, i), pick(x, a, i), pick(index, a, i), dim - (a < dim), name)
        return
    n = iv.size
    _checked(device, name, size, lambda err: _launch(
        device, INDEX, "move", f"gather<{MOVES[x.dtype.itemsize]}>", n,
        [ptr(ov), ptr(xv), ptr(iv), *i64(n), geometry(shape, *st), *i64(size, step), err]))


def scatter(out: Array, src: Array, index: Array, dim: int, add: bool, name: str) -> None:
    device = out.device
    if add and out.dtype in WIDEN:  # accumulate in a type the atomics take, round once
        wide = WIDEN[out.dtype]
        acc = memory.contiguous(out, wide)
        scatter(acc, memory.contiguous(src, wide), index, dim, add, name)
        memory.copy_into(out, acc)
        return
    ov, sv, iv = _one_d(out, src, index)
    strides = list(ov.strides)
    size, step, strides[dim] = ov.shape[dim], strides[dim], 0
    shape, st = merge_dims(iv.shape, strides, sv.strides, iv.strides)
    if len(shape) > MAX_DIMS:
        a = _outer(dim)
        for i in range(index.shape[a]):
            scatter(pick(out, a, i), pick(src, a, i), pick(index, a, i), dim - (a < dim), add, name)
        return
    kernel = f"scatter<{out.dtype.c_type}, true>" if add else f"scatter<{MOVES[out.dtype.itemsize]}, false>"
    n = iv.size
    _checked(device, name, size, lambda err: _launch(
        device, INDEX, "add" if add else "move", kernel, n,
        [ptr(ov), ptr(sv), ptr(iv), *i64(n), geometry(shape, *st), *i64(size, step), err]))


def register() -> None:
    """Fill the ``gpu`` column of the plugin's tables."""
    backs.SOFTMAX["gpu"], backs.NORM["gpu"] = softmax, norm
    backs.CONV["gpu"], backs.POOL["gpu"], backs.UPSAMPLE["gpu"] = conv, pool, upsample
    backs.GATHER["gpu"], backs.SCATTER["gpu"] = gather, scatter
