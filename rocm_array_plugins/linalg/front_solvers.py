"""Inverses, solves and determinants: inv, solve, pinv, matrix_rank, det, slogdet."""

from __future__ import annotations

from typing import NamedTuple

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.broadcast import broadcast_view
from rocm_array.devices import check_same
from rocm_array.dtypes import CATEGORIES, real_of
from rocm_array.hookspecs import Impl

from .backs import lapack
from .common import broadcast_batch, drop_axis, floating_matrices, insert_axis, matrices, operands


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def inv(x: Array, /) -> Array:
    """The inverse of each square matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    Array
        Of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        A singular matrix (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (getrf, then
    getrs against the identity) on a column-major copy, one call per matrix of a stack; float16 and
    bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.matrix_norm(xp.linalg.inv(a) @ a - xp.eye(2, device="cpu")) < 1e-12
    Array(True, dtype=bool, device=cpu)
    """
    dtype = floating_matrices("inv", x, square=True)
    return lapack("inv", [x], dtype, (dtype,))[0]


def solve(x1: Array, x2: Array, /) -> Array:
    """The solution X of ``x1 @ X = x2`` for each matrix of ``x1``.

    Parameters
    ----------
    x1 : Array
        Square floating matrices (a stack).
    x2 : Array
        Right-hand sides: a vector (when 1-D) or matrices, broadcast against x1's stack.

    Returns
    -------
    Array
        X, of the promoted floating dtype.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Shapes that do not match or broadcast, or several devices.
    LinAlgError
        A singular matrix (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (getrf and
    getrs) on a column-major copy, one call per matrix of a stack; float16 and bfloat16 are solved
    in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.solve(a, xp.asarray([1.0, 2.0], device="cpu"))
    Array([0.09090909, 0.63636364], dtype=float64, device=cpu)
    """
    dtype = operands("solve", x1, x2, category="floating-point")
    matrices("solve", x1, square=True)
    m = x1.shape[-1]
    vector = x2.ndim == 1
    b = insert_axis(x2, 1) if vector else x2
    if b.ndim < 2 or b.shape[-2] != m:
        raise ValueError(f"solve(): x2 of shape {x2.shape} does not fit matrices of shape {x1.shape}")
    batch = broadcast_batch("solve", x1.shape[:-2], b.shape[:-2])
    a = broadcast_view(x1, batch + (m, m))
    b = broadcast_view(b, batch + b.shape[-2:])
    out = lapack("solve", [a, b], dtype, (dtype,))[0]
    return drop_axis(out, out.ndim - 1) if vector else out


def _rtol(name: str, rtol: object, x: Array) -> float | Array | None:
    """``rtol`` checked: None, a real number, or a real floating array broadcast to x's batch (ValueError if it does not fit)."""
    if rtol is None:
        return None
    if isinstance(rtol, Array):
        if rtol.dtype not in CATEGORIES["real floating"]:
            raise TypeError(f"{name}(): rtol must have a real floating dtype, not {rtol.dtype.name}")
        check_same(x, rtol)
        return broadcast_view(rtol, x.shape[:-2], name=name)
    if isinstance(rtol, (int, float)) and not isinstance(rtol, bool):
        return float(rtol)
    raise TypeError(f"{name}(): rtol must be a float, an array or None, not {type(rtol).__name__}")


def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """The Moore–Penrose pseudo-inverse of each matrix.

    Parameters
    ----------
    x : Array
        A floating array of at least two dimensions; the last two are the matrices.
    rtol : float or Array, optional
        Singular values below rtol times the largest count as zero. Default: max(M, N) * eps of the
        dtype.

    Returns
    -------
    Array
        Of shape (..., N, M).

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions.

    Notes
    -----
    Devices: built from ``svd`` and ``matmul`` (a vendor SVD and GEMM on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.matrix_norm(xp.linalg.pinv(a) @ a - xp.eye(2, device="cpu")) < 1e-12
    Array(True, dtype=bool, device=cpu)
    """
    dtype = floating_matrices("pinv", x)
    return lapack("pinv", [x], dtype, (dtype,), rtol=_rtol("pinv", rtol, x))[0]


def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """The rank of each matrix: its singular values above the tolerance, counted.

    Parameters
    ----------
    x : Array
        A floating array of at least two dimensions; the last two are the matrices.
    rtol : float or Array, optional
        As pinv's.

    Returns
    -------
    Array
        int64 counts, one per matrix.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions.

    Notes
    -----
    Devices: ``svdvals`` and the reduction plugin's ``sum``.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linalg.matrix_rank(xp.asarray([[1.0, 2.0], [2.0, 4.0]], device="cpu"))
    Array(1, dtype=int64, device=cpu)
    """
    dtype = floating_matrices("matrix_rank", x)
    return lapack("matrix_rank", [x], dtype, (dtypes.DEFAULT_INT,), rtol=_rtol("matrix_rank", rtol, x))[0]


def det(x: Array, /) -> Array:
    """The determinant of each square matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    Array
        One value per matrix, of ``x``'s dtype.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (getrf: the
    product of the pivots, signed by the row swaps) on a column-major copy, one call per matrix of a
    stack; float16 and bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.det(a)
    Array(11., dtype=float64, device=cpu)
    """
    dtype = floating_matrices("det", x, square=True)
    return lapack("det", [x], dtype, (dtype,))[0]


def slogdet(x: Array, /) -> SlogdetResult:
    """The sign and the log of the absolute value of each square matrix's determinant.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    SlogdetResult
        A named tuple (sign, logabsdet); a singular matrix gives sign 0 and -inf.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (getrf) on a
    column-major copy, one call per matrix of a stack; float16 and bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.slogdet(a)
    SlogdetResult(sign=Array(1., dtype=float64, device=cpu), logabsdet=Array(2.39789527, dtype=float64, device=cpu))
    """
    dtype = floating_matrices("slogdet", x, square=True)
    return SlogdetResult(*lapack("slogdet", [x], dtype, (dtype, real_of(dtype))))


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f) for f in (inv, solve, pinv, matrix_rank, det, slogdet)]
