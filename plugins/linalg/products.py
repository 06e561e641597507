"""Products and matrix views: matmul (``@``), tensordot, vecdot, outer, cross, matrix_power,
matrix_transpose, diagonal and trace.

tensordot and matrix_power are built on matmul's back (and inv's), so a device
with a matrix-product back has them too; outer is the elementwise multiply;
matrix_transpose and diagonal are views.
"""

from __future__ import annotations

import math
from typing import Sequence

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.axes import integer, normalize_axes, normalize_axis
from rocm_array.broadcast import broadcast_view
from rocm_array.dtypes import DType
from rocm_array.hookspecs import Impl
from rocm_array.memory import copy_into, empty, full
from rocm_array_plugins.elementwise import own as elementwise

from .backs import CROSS, MATMUL, SUM_LAST, VECDOT, lapack
from .common import (broadcast_batch, diagonal_view, drop_axis, floating_matrices, insert_axis, matrices,
                     move_axis, operands, permute, reshape)


def _matmul(a: Array, b: Array, dtype: DType) -> Array:
    """Matrix products of stacks ``a`` (..., M, K) and ``b`` (..., K, N), their batches broadcast."""
    if a.shape[:-2] != b.shape[:-2]:
        batch = broadcast_batch("matmul", a.shape[:-2], b.shape[:-2])
        a = broadcast_view(a, batch + a.shape[-2:])
        b = broadcast_view(b, batch + b.shape[-2:])
    return MATMUL[a.device.kind](a, b, dtype)


def matmul(x1: Array, x2: Array, /) -> Array:
    """The standard's matmul; a 1-D operand is a row (first) or column (second) vector."""
    dtype = operands("matmul", x1, x2, category="numeric")
    nd1, nd2 = x1.ndim, x2.ndim
    if nd1 == 0 or nd2 == 0:
        raise ValueError(f"matmul() needs arrays of at least 1 dimension, got shapes {x1.shape} and {x2.shape}")
    a = insert_axis(x1, 0) if nd1 == 1 else x1
    b = insert_axis(x2, 1) if nd2 == 1 else x2
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul(): shapes {x1.shape} and {x2.shape} do not align "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    out = _matmul(a, b, dtype)
    if nd1 == 1:
        out = drop_axis(out, out.ndim - 2)
    if nd2 == 1:
        out = drop_axis(out, out.ndim - 1)
    return out


def _contracted(x1: Array, x2: Array, axes: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """tensordot's ``axes`` as two equally long tuples of axes of ``x1`` and ``x2``."""
    if isinstance(axes, int) and not isinstance(axes, bool):
        if not 0 <= axes <= min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot(): axes={axes} must be in [0, {min(x1.ndim, x2.ndim)}] "
                             f"for shapes {x1.shape} and {x2.shape}")
        return tuple(range(x1.ndim - axes, x1.ndim)), tuple(range(axes))
    if not (isinstance(axes, (tuple, list)) and len(axes) == 2):
        raise TypeError(f"tensordot(): axes must be a non-negative int or a pair of axis sequences, got {axes!r}")
    first = normalize_axes(axes[0], x1.ndim, "tensordot")
    second = normalize_axes(axes[1], x2.ndim, "tensordot")
    if len(first) != len(second):
        raise ValueError(f"tensordot(): axes {axes!r} name different numbers of axes")
    return first, second


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Contract ``axes`` as one matrix product: (free1, contracted) @ (contracted, free2)."""
    dtype = operands("tensordot", x1, x2, category="numeric")
    first, second = _contracted(x1, x2, axes)
    for i, j in zip(first, second):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot(): axis {i} of shape {x1.shape} and axis {j} of shape {x2.shape} "
                             "differ in size")
    free1 = tuple(i for i in range(x1.ndim) if i not in first)
    free2 = tuple(j for j in range(x2.ndim) if j not in second)
    shape1 = tuple(x1.shape[i] for i in free1)
    shape2 = tuple(x2.shape[j] for j in free2)
    k = math.prod(x1.shape[i] for i in first)
    a = reshape(permute(x1, free1 + first), (math.prod(shape1), k))
    b = reshape(permute(x2, second + free2), (k, math.prod(shape2)))
    return reshape(MATMUL[a.device.kind](a, b, dtype), shape1 + shape2)


def _vectors(name: str, x1: Array, x2: Array, axis: int) -> tuple[Array, Array, int]:
    """``x1`` and ``x2`` with their ``axis`` last and the other axes broadcast; and ``axis`` as negative.

    The standard asks for a negative ``axis`` in ``[-min(ndim), -1]``; a non-negative one counts
    from the start of the shorter shape's last ``min(ndim)`` axes.
    """
    nd = min(x1.ndim, x2.ndim)
    if nd == 0:
        raise ValueError(f"{name}() needs arrays of at least 1 dimension, got shapes {x1.shape} and {x2.shape}")
    ax = normalize_axis(axis, nd, name) - nd
    if x1.shape[ax] != x2.shape[ax]:
        raise ValueError(f"{name}(): shapes {x1.shape} and {x2.shape} differ along axis {ax}")
    a = move_axis(x1, x1.ndim + ax, x1.ndim - 1)
    b = move_axis(x2, x2.ndim + ax, x2.ndim - 1)
    shape = broadcast_batch(name, a.shape[:-1], b.shape[:-1]) + a.shape[-1:]
    return broadcast_view(a, shape), broadcast_view(b, shape), ax


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot products along ``axis``, conjugating ``x1``."""
    dtype = operands("vecdot", x1, x2, category="numeric")
    a, b, _ = _vectors("vecdot", x1, x2, axis)
    return VECDOT[a.device.kind](a, b, dtype)


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross products of the 3-vectors along ``axis``."""
    dtype = operands("cross", x1, x2, category="numeric")
    a, b, ax = _vectors("cross", x1, x2, axis)
    if a.shape[-1] != 3:
        raise ValueError(f"cross() needs 3-element vectors along axis {ax}, got shapes {x1.shape} and {x2.shape}")
    out = CROSS[a.device.kind](a, b, dtype)
    return move_axis(out, out.ndim - 1, out.ndim + ax)


def outer(x1: Array, x2: Array, /) -> Array:
    """The outer product of two vectors: the essential elementwise plugin's multiply of (N, 1) by (1, M).

    Not a K=1 matrix product: a GEMM adds each product to a zero and loses the sign of -0.0.
    """
    operands("outer", x1, x2, category="numeric")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer() needs two 1-D arrays, got shapes {x1.shape} and {x2.shape}")
    return elementwise("multiply")(insert_axis(x1, 1), insert_axis(x2, 0))


def _identity(shape: tuple[int, ...], dtype: DType, like: Array) -> Array:
    out = full(shape, 0, dtype, like.device)
    copy_into(diagonal_view(out, 0), full((), 1, dtype, like.device))
    return out


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` to the integer power ``n`` by repeated squaring; a negative ``n`` inverts first."""
    dtype = floating_matrices("matrix_power", x, square=True)
    n = integer(n, "matrix_power", "n")
    if n == 0:
        return _identity(x.shape, dtype, x)
    power = x if n > 0 else lapack("inv", [x], dtype, (dtype,))[0]
    result = None
    n = abs(n)
    while True:
        if n & 1:
            result = power if result is None else _matmul(result, power, dtype)
        n >>= 1
        if not n:
            break
        power = _matmul(power, power, dtype)
    if result is x:  # n == 1: a new array, never x itself
        result = empty(x.shape, dtype, x.device)
        copy_into(result, x)
    return result


def matrix_transpose(x: Array, /) -> Array:
    """The transposes of the last two axes, as a view."""
    operands("matrix_transpose", x, category="any")
    matrices("matrix_transpose", x)
    return x.mT


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset`` diagonals of the last two axes, as a view."""
    operands("diagonal", x, category="any")
    matrices("diagonal", x)
    return diagonal_view(x, integer(offset, "diagonal", "offset"))


#: trace's default accumulator: integers narrower than the default int widen to it (unsigned to uint64).
_WIDE = {**{d: dtypes.int64 for d in (dtypes.int8, dtypes.int16, dtypes.int32)},
         **{d: dtypes.uint64 for d in (dtypes.uint8, dtypes.uint16, dtypes.uint32)}}


def trace(x: Array, /, *, offset: int = 0, dtype: DType | None = None) -> Array:
    """Sums of the ``offset`` diagonals, in ``dtype`` (default: x's, integers widened)."""
    operands("trace", x, category="numeric")
    matrices("trace", x)
    out = _WIDE.get(x.dtype, x.dtype) if dtype is None else dtypes.check_dtype(dtype)
    d = diagonal_view(x, integer(offset, "trace", "offset"))
    return SUM_LAST[x.device.kind](d, out)


IMPLS: list[Impl] = [
    *(Impl(f"{prefix}{f.__name__}", f) for f in (matmul, tensordot, vecdot, matrix_transpose)
      for prefix in ("", "linalg.")),
    *(Impl(f"linalg.{f.__name__}", f) for f in (outer, cross, matrix_power, diagonal, trace)),
]
