"""Products and matrix views: matmul (``@``), tensordot, vecdot, outer, cross, matrix_power,
matrix_transpose, diagonal and trace.

tensordot and matrix_power are built on matmul's back (and inv's), so a device
with a matrix-product back has them too; outer is the elementwise multiply;
matrix_transpose and diagonal are views.
"""

from __future__ import annotations

import math
from typing import Sequence, cast

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.axes import integer, normalize_axes, normalize_axis
from rocm_array.broadcast import broadcast_view
from rocm_array.dtypes import DType
from rocm_array.hookspecs import Impl
from rocm_array.memory import copy_into, empty, full
from rocm_array_plugins.elementwise import own as elementwise

from .backs import CROSS, MATMUL, SUM_LAST, VECDOT, lapack
from .common import (LinAlgError, broadcast_batch, diagonal_view, drop_axis, floating_matrices, insert_axis,
                     matrices, move_axis, operands, permute, reshape)


def _matmul(a: Array, b: Array, dtype: DType) -> Array:
    """Matrix products of stacks ``a`` (..., M, K) and ``b`` (..., K, N), their batches broadcast."""
    if a.shape[:-2] != b.shape[:-2]:
        batch = broadcast_batch("matmul", a.shape[:-2], b.shape[:-2])
        a = broadcast_view(a, batch + a.shape[-2:])
        b = broadcast_view(b, batch + b.shape[-2:])
    return cast("Array", MATMUL[a.device.kind](a, b, dtype))


def matmul(x1: Array, x2: Array, /) -> Array:
    """The matrix product of ``x1`` and ``x2`` (the ``@`` operator), broadcast over stacks.

    Parameters
    ----------
    x1, x2 : Array
        Numeric arrays of at least one dimension; a 1-D operand is a vector (its axis is dropped
        from the result).

    Returns
    -------
    Array
        The product, of the promoted dtype, on the inputs' device.

    Raises
    ------
    TypeError
        Non-numeric or non-array operands, or dtypes without a promoted dtype.
    ValueError
        Inner dimensions that differ, batch shapes that do not broadcast, 0-D operands, or several
        devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the strided-batched GEMM of cuBLAS (NVIDIA) or hipBLAS (AMD)
    for floating dtypes (float32 in full float32 unless ROCM_ARRAY_ALLOW_TF32=1; float16 and
    bfloat16 accumulate in float32), the project's own kernel for integers.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> a @ a
    Array([[17.,  7.],
           [ 7., 10.]], dtype=float64, device=cpu)
    """
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
    """The sum of products of ``x1`` and ``x2`` over the axes ``axes`` names.

    Parameters
    ----------
    x1, x2 : Array
        Numeric arrays.
    axes : int or pair of sequences, optional
        N: the last N axes of x1 with the first N of x2; or two sequences of axes to contract.
        Default: 2.

    Returns
    -------
    Array
        x1's free axes, then x2's, of the promoted dtype.

    Raises
    ------
    TypeError
        Non-numeric operands.
    ValueError
        Contracted axes of different sizes, or several devices.

    Notes
    -----
    Devices: the operands are permuted to matrices and multiplied by ``matmul`` (one GEMM on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.tensordot(xp.ones((2, 3), device="cpu"), xp.ones((3, 4), device="cpu"), axes=1)
    Array([[3., 3., 3., 3.],
           [3., 3., 3., 3.]], dtype=float64, device=cpu)
    """
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
    """The dot product of vectors along ``axis``, ``sum(conj(x1) * x2)``, broadcast over the rest.

    Parameters
    ----------
    x1, x2 : Array
        Numeric arrays; same length along ``axis``.
    axis : int, optional
        Default: -1.

    Returns
    -------
    Array
        The products, without ``axis``, of the promoted dtype.

    Raises
    ------
    TypeError
        Non-numeric operands.
    ValueError
        Lengths that differ, shapes that do not broadcast.

    Notes
    -----
    Devices: NumPy on ``cpu``; a batched GEMM of cuBLAS (NVIDIA) or hipBLAS (AMD) (floating) or the
    project's kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.vecdot(xp.asarray([1.0, 2.0], device="cpu"), xp.asarray([3.0, 4.0], device="cpu"))
    Array(11., dtype=float64, device=cpu)
    """
    dtype = operands("vecdot", x1, x2, category="numeric")
    a, b, _ = _vectors("vecdot", x1, x2, axis)
    return cast("Array", VECDOT[a.device.kind](a, b, dtype))


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis``.

    Parameters
    ----------
    x1, x2 : Array
        Numeric arrays with 3 elements along ``axis``.
    axis : int, optional
        Default: -1.

    Returns
    -------
    Array
        Of the broadcast shape and the promoted dtype.

    Raises
    ------
    TypeError
        Non-numeric operands.
    ValueError
        An axis of another length than 3, or shapes that do not broadcast.

    Notes
    -----
    Devices: NumPy on ``cpu``; one kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linalg.cross(xp.asarray([1.0, 0.0, 0.0], device="cpu"), xp.asarray([0.0, 1.0, 0.0], device="cpu"))
    Array([0., 0., 1.], dtype=float64, device=cpu)
    """
    dtype = operands("cross", x1, x2, category="numeric")
    a, b, ax = _vectors("cross", x1, x2, axis)
    if a.shape[-1] != 3:
        raise ValueError(f"cross() needs 3-element vectors along axis {ax}, got shapes {x1.shape} and {x2.shape}")
    out = CROSS[a.device.kind](a, b, dtype)
    return move_axis(out, out.ndim - 1, out.ndim + ax)


def outer(x1: Array, x2: Array, /) -> Array:
    """The outer product of two vectors.

    Parameters
    ----------
    x1, x2 : Array
        1-D numeric arrays.

    Returns
    -------
    Array
        A 2-D array ``x1[i] * x2[j]`` of the promoted dtype.

    Raises
    ------
    ValueError
        Operands that are not 1-D.

    Notes
    -----
    Devices: an elementwise multiply of broadcast views.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linalg.outer(xp.asarray([1, 2], device="cpu"), xp.asarray([3, 4, 5], device="cpu"))
    Array([[ 3,  4,  5],
           [ 6,  8, 10]], dtype=int64, device=cpu)
    """
    operands("outer", x1, x2, category="numeric")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer() needs two 1-D arrays, got shapes {x1.shape} and {x2.shape}")
    return cast("Array", elementwise("multiply")(insert_axis(x1, 1), insert_axis(x2, 0)))


def _identity(shape: tuple[int, ...], dtype: DType, like: Array) -> Array:
    out = full(shape, 0, dtype, like.device)
    copy_into(diagonal_view(out, 0), full((), 1, dtype, like.device))
    return out


def matrix_power(x: Array, n: int, /) -> Array:
    """Square matrices raised to the integer power ``n`` (negative: of the inverse).

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).
    n : int
        The power.

    Returns
    -------
    Array
        Of ``x``'s shape and dtype (a float dtype for negative ``n``).

    Raises
    ------
    TypeError
        n that is not an int.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        A singular matrix for a negative n (a ValueError).

    Notes
    -----
    Devices: repeated squaring with ``matmul`` (GEMM on a GPU); ``inv`` first for negative powers.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.matrix_power(a, 2)
    Array([[17.,  7.],
           [ 7., 10.]], dtype=float64, device=cpu)
    """
    dtype = floating_matrices("matrix_power", x, square=True)
    n = integer(n, "matrix_power", "n")
    if n == 0:
        return _identity(x.shape, dtype, x)
    try:
        power = x if n > 0 else lapack("inv", [x], dtype, (dtype,))[0]
    except LinAlgError as e:  # (the inverse's own message names inv)
        raise LinAlgError(f"matrix_power(): n={n} needs the inverse, which failed: {e}") from None
    result = None
    n = abs(n)
    while True:
        if n & 1:
            result = power if result is None else _matmul(result, power, dtype)
        n >>= 1
        if not n:
            break
        power = _matmul(power, power, dtype)
    assert result is not None  # n >= 1 here: the loop multiplied at least once
    if result is x:  # n == 1: a new array, never x itself
        result = empty(x.shape, dtype, x.device)
        copy_into(result, x)
    return result


def matrix_transpose(x: Array, /) -> Array:
    """The transpose of each matrix in the last two axes of ``x``.

    Parameters
    ----------
    x : Array
        At least 2-D.

    Returns
    -------
    Array
        A view of ``x`` (``x.mT``).

    Raises
    ------
    ValueError
        Fewer than two dimensions.

    Notes
    -----
    Devices: stride arithmetic only.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.matrix_transpose(xp.asarray([[1, 2, 3]], device="cpu")).shape
    (3, 1)
    """
    operands("matrix_transpose", x, category="any")
    matrices("matrix_transpose", x)
    return x.mT


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """Diagonal ``offset`` of each matrix in the last two axes.

    Parameters
    ----------
    x : Array
        At least 2-D.
    offset : int, optional
        0 the main diagonal, positive above. Default: 0.

    Returns
    -------
    Array
        A view of ``x`` (the diagonal's stride).

    Raises
    ------
    ValueError
        Fewer than two dimensions.

    Notes
    -----
    Devices: stride arithmetic only.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.diagonal(a)
    Array([4., 3.], dtype=float64, device=cpu)
    """
    operands("diagonal", x, category="any")
    matrices("diagonal", x)
    return diagonal_view(x, integer(offset, "diagonal", "offset"))


#: trace's default accumulator: integers narrower than the default int widen to it (unsigned to uint64).
_WIDE = {**{d: dtypes.int64 for d in (dtypes.int8, dtypes.int16, dtypes.int32)},
         **{d: dtypes.uint64 for d in (dtypes.uint8, dtypes.uint16, dtypes.uint32)}}


def trace(x: Array, /, *, offset: int = 0, dtype: DType | None = None) -> Array:
    """The sum along diagonal ``offset`` of each matrix.

    Parameters
    ----------
    x : Array
        A numeric array of at least 2 dimensions.
    offset : int, optional
        Default: 0.
    dtype : DType, optional
        As ``sum``'s. Default: as ``sum`` chooses.

    Returns
    -------
    Array
        One value per matrix.

    Raises
    ------
    ValueError
        Fewer than two dimensions.

    Notes
    -----
    Devices: the reduction plugin's ``sum`` of the diagonal view.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.trace(a)
    Array(7., dtype=float64, device=cpu)
    """
    operands("trace", x, category="numeric")
    matrices("trace", x)
    out = _WIDE.get(x.dtype, x.dtype) if dtype is None else dtypes.check_dtype(dtype, "trace")
    d = diagonal_view(x, integer(offset, "trace", "offset"))
    return cast("Array", SUM_LAST[x.device.kind](d, out))


IMPLS: list[Impl] = [
    *(Impl(f"{prefix}{f.__name__}", f) for f in (matmul, tensordot, vecdot, matrix_transpose)
      for prefix in ("", "linalg.")),
    *(Impl(f"linalg.{f.__name__}", f) for f in (outer, cross, matrix_power, diagonal, trace)),
]
