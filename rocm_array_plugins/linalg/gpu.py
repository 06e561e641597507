"""The gpu backs of the matrix products: strided-batched GEMM of the vendor BLAS, the small
float32 GEMM kernel where it is faster (``small_gemm``), the integer GEMM kernel, and vecdot,
cross and trace sums.

Floating-point products (float16, bfloat16, float32, float64, complex64, complex128)
are one ``gemm`` call of ``rocm_array.runtime.blas`` per product: the batch
dimensions, once broadcast and merged, are one stride per operand, and a row-major
or column-major operand goes in through the transpose flags (rocm_array's row-major
C = A @ B is the column-major C^T = B^T A^T). An operand that fits neither, or
whose batch does not merge, is copied once on the device. Integer products run
``rocm_array_kernels/linalg/linalg.hip``'s ``int_gemm``, which takes any strides.
cross and trace sums are the elementwise and reduction plugins' functions.
"""

from __future__ import annotations

import functools
import math
import typing
from typing import Any

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import Family, address, i64, ptr
from rocm_array.memory import contiguous, copy_into, empty, full
from rocm_array.runtime.vendor import library
from rocm_array.runtime.layout import MAX_GRID_Y, merge_dims
from rocm_array_plugins.elementwise import own as elementwise
from rocm_array_plugins.reduction import own as reduction

from . import backs, small_gemm
from .common import drop_axis, insert_axis

__all__ = ["LINALG", "kernel_sources", "product", "matmul", "vecdot", "cross", "sum_last", "cast"]

#: int_gemm's tile: a block of _TILE x _TILE threads computes as many outputs. A 2048^2 int32
#: product on an H200 took 4195 us at 8, 2804 at 16 and 2634 at 32 (32 not yet run through the suite).
_TILE = 16
LINALG = Family("linalg/linalg.hip", {"RA_GEMM_TILE": _TILE}, {"int_gemm": _TILE * _TILE})
#: The solvers' dtypes, and the pivot dtypes of the platforms (int64: cuSOLVER's generic API, int32: hipSOLVER).
SOLVER_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)
_PIVOTS = (dtypes.int32, dtypes.int64)
_INTEGRAL = CATEGORIES["integral"]


@functools.lru_cache(maxsize=1)
def kernel_names() -> tuple[str, ...]:
    """Every instantiation of linalg.hip, compiled as one program."""
    ints = [d for d in dtypes.ALL if d in _INTEGRAL]
    return (*(f"int_gemm<{d.c_type}>" for d in ints),
            *(f"triangle<{d.c_type}>" for d in SOLVER_DTYPES),
            *(f"lu_det<{d.c_type}, {p.c_type}>" for d in SOLVER_DTYPES for p in _PIVOTS),
            *(f"lu_slogdet<{d.c_type}, {dtypes.real_of(d).c_type}, {p.c_type}>" for d in SOLVER_DTYPES
              for p in _PIVOTS))


def kernel_sources() -> list[KernelSource]:
    return LINALG.sources([kernel_names()])


def launch(x: Array, name: str, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any]) -> None:
    """Queue ``name`` of linalg.hip on ``x``'s device."""
    LINALG.launch(x.device, name, kernel_names(), grid, block, args)


def cast(x: Array, dtype: DType) -> Array:
    """``x`` itself when of ``dtype`` (any layout: BLAS reads strided operands), else a contiguous copy cast to it."""
    return x if x.dtype is dtype else memory.copy(x, dtype)


def _blas_layout(rows: int, cols: int, s_row: int, s_col: int, *, column: bool = False) -> tuple[str, int] | None:
    """How BLAS can read a rows x cols matrix at these strides: ("N", ld) when row-major (BLAS
    sees its transpose), ("T", ld) when column-major (only that when ``column``); None otherwise."""
    if not column and (cols == 1 or s_col == 1) and (rows == 1 or s_row >= max(cols, 1)):
        return "N", s_row if rows > 1 else max(cols, 1)
    if (rows == 1 or s_row == 1) and (cols == 1 or s_col >= max(rows, 1)):
        return "T", s_col if cols > 1 else max(rows, 1)
    return None


def _batched(a: Array, b: Array) -> tuple[Array, Array, int, int, int]:
    """``a`` and ``b`` (same batch shape) with their batch merged into one stride each:
    (a, b, batch count, a's batch stride, b's batch stride); contiguous copies when it does not merge."""
    batch = a.shape[:-2]
    if len(batch) < 2:  # the common cases, without merging
        return (a, b, 1, 0, 0) if not batch else (a, b, batch[0], a.strides[0], b.strides[0])
    count = math.prod(batch)
    shape, (sa, sb) = merge_dims(batch, a.strides[:-2], b.strides[:-2])
    if len(shape) > 1:
        a, b = contiguous(a), contiguous(b)
        return a, b, count, a.shape[-2] * a.shape[-1], b.shape[-2] * b.shape[-1]
    return a, b, count, sa[0], sb[0]


def product(a: Array, b: Array, dtype: DType, *, conj_a: bool = False) -> Array:
    """Stacked products ``a @ b`` (``conj(a) @ b`` when asked) of (..., M, K) and (..., K, N), batches
    already broadcast, computed in and returned as ``dtype`` (a new contiguous array)."""
    batch, (m, k), n = a.shape[:-2], a.shape[-2:], b.shape[-1]
    dev = a.device
    out = empty((*batch, m, n), dtype, dev)
    if 0 in out.shape:
        return out
    if k == 0:
        return full(out.shape, 0, dtype, dev)
    if a.dtype is not dtype or b.dtype is not dtype:
        a, b = cast(a, dtype), cast(b, dtype)
    if dtype in _INTEGRAL:
        _int_gemm(out, a, b)
        return out
    rt = dev.runtime
    a, b, count, sa, sb = _batched(a, b)
    # A conjugated operand goes in column-major, with the flag "C".
    la = _blas_layout(m, k, a.strides[-2], a.strides[-1], column=conj_a)
    if la is None:
        col = empty((*batch, k, m), dtype, dev).mT
        copy_into(col, a)
        a, sa, la = col, m * k, ("T", max(m, 1))
    lb = _blas_layout(k, n, b.strides[-2], b.strides[-1])
    if lb is None:
        b = contiguous(b)
        sb, lb = k * n, ("N", max(n, 1))
    if la[0] == lb[0] == "N" and not conj_a:
        config = small_gemm.plan(dev, dtype, m, n, k, count, a, la[1], sa, b, lb[1], sb)
        if config is not None:
            small_gemm.launch(config, out, a, b, m, n, k, count, la[1], sa, lb[1], sb)
            return out
    op_a = "C" if conj_a else la[0]
    library("blas", rt).gemm(dtype, lb[0], op_a, n, m, k, address(b), lb[1], sb, address(a), la[1], sa,
                     address(out), n, m * n, count)
    return out


def _int_gemm(out: Array, a: Array, b: Array) -> None:
    *_, m, k = a.shape
    n = b.shape[-1]
    a, b, count, sa, sb = _batched(a, b)
    grid = (min(-(-n // _TILE), MAX_GRID_Y), min(-(-m // _TILE), MAX_GRID_Y), min(count, MAX_GRID_Y))
    launch(out, f"int_gemm<{out.dtype.c_type}>", grid, (_TILE, _TILE, 1),
           [ptr(out), ptr(a), ptr(b), *i64(m, n, k, count, sa, a.strides[-2], a.strides[-1],
                                         sb, b.strides[-2], b.strides[-1])])


def matmul(a: Array, b: Array, dtype: DType) -> Array:
    return product(a, b, dtype)


def vecdot(a: Array, b: Array, dtype: DType) -> Array:
    """Dot products over the last axis as (1, K) @ (K, 1) products, ``a`` conjugated."""
    conj = dtype in CATEGORIES["complex floating"]
    out = product(insert_axis(a, a.ndim - 1), insert_axis(b, b.ndim), dtype, conj_a=conj)
    return drop_axis(drop_axis(out, out.ndim - 1), out.ndim - 2)


def _component(v: Array, i: int) -> Array:
    return v._view(v.shape[:-1], v.strides[:-1], v.offset + i * v.strides[-1])


def cross(a: Array, b: Array, dtype: DType) -> Array:
    """The cross products from the elementwise plugin's multiply, subtract and stack."""
    a, b = cast(a, dtype), cast(b, dtype)
    mul, sub = elementwise("multiply"), elementwise("subtract")
    parts = [sub(mul(_component(a, i), _component(b, j)), mul(_component(a, j), _component(b, i)))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return typing.cast("Array", elementwise("stack")(parts, axis=-1))


def sum_last(x: Array, dtype: DType) -> Array:
    """The reduction plugin's sum over the last axis, in ``dtype``."""
    return typing.cast("Array", reduction("sum")(x, axis=-1, dtype=dtype))


def register() -> None:
    """Fill the ``gpu`` column of the product tables (the LAPACK one is ``gpu_lapack.register``)."""
    backs.MATMUL["gpu"], backs.VECDOT["gpu"] = matmul, vecdot
    backs.CROSS["gpu"], backs.SUM_LAST["gpu"] = cross, sum_last
