"""Factorizations and spectra: cholesky, qr, svd, svdvals, eig, eigvals, eigh, eigvalsh.

Each front checks the operand (a floating-point stack of matrices) and names
the result dtypes; the device's LAPACK-class back computes them.
"""

from __future__ import annotations

from typing import NamedTuple

from rocm_array.array import Array
from rocm_array.dtypes import complex_of, real_of
from rocm_array.axes import flag
from rocm_array.hookspecs import Impl

from .backs import lapack
from .common import floating_matrices


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The Cholesky factor of each symmetric (Hermitian) positive-definite matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).
    upper : bool, optional
        Give U with x = U^H U instead of L with x = L L^H. Default: False.

    Returns
    -------
    Array
        The triangular factors, of ``x``'s shape.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        A matrix that is not positive definite (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (potrf) on a
    column-major copy, one call per matrix of a stack; float16 and bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.cholesky(a)
    Array([[2.       , 0.       ],
           [0.5      , 1.6583124]], dtype=float64, device=cpu)
    """
    dtype = floating_matrices("cholesky", x, square=True)
    return lapack("cholesky", [x], dtype, (dtype,), upper=flag(upper, "cholesky", "upper"))[0]


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorization of each matrix.

    Parameters
    ----------
    x : Array
        A floating array of at least two dimensions; the last two are the matrices.
    mode : {'reduced', 'complete'}, optional
        Default: 'reduced'.

    Returns
    -------
    QRResult
        A named tuple (Q, R): orthonormal Q and upper-triangular R.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or an unknown mode.

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (geqrf, then
    orgqr or ungqr) on a column-major copy, one call per matrix of a stack; float16 and bfloat16 are
    solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> q, r = xp.linalg.qr(a)
    >>> xp.linalg.matrix_norm(q @ r - a) < 1e-12
    Array(True, dtype=bool, device=cpu)
    """
    dtype = floating_matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr(): mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*lapack("qr", [x], dtype, (dtype, dtype), mode=mode))


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition of each matrix.

    Parameters
    ----------
    x : Array
        A floating array of at least two dimensions; the last two are the matrices.
    full_matrices : bool, optional
        Square U and Vh (True) or reduced ones. Default: True.

    Returns
    -------
    SVDResult
        A named tuple (U, S, Vh); S descending, real.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions.
    LinAlgError
        No convergence (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER's Jacobi gesvdj (NVIDIA) or hipSOLVER's
    gesvd (AMD) on a column-major copy, one call per matrix of a stack; float16 and bfloat16 are
    solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.svd(a).S
    Array([4.61803399, 2.38196601], dtype=float64, device=cpu)
    """
    dtype = floating_matrices("svd", x)
    return SVDResult(*lapack("svd", [x], dtype, (dtype, real_of(dtype), dtype), full_matrices=flag(full_matrices, "svd", "full_matrices")))


def svdvals(x: Array, /) -> Array:
    """The singular values of each matrix, descending.

    Parameters
    ----------
    x : Array
        A floating array of at least two dimensions; the last two are the matrices.

    Returns
    -------
    Array
        Real values, one row per matrix.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions.
    LinAlgError
        No convergence (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (gesvd without
    vectors) on a column-major copy, one call per matrix of a stack; float16 and bfloat16 are solved
    in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.svdvals(a)
    Array([4.61803399, 2.38196601], dtype=float64, device=cpu)
    """
    dtype = floating_matrices("svdvals", x)
    return lapack("svdvals", [x], dtype, (real_of(dtype),))[0]


def eig(x: Array, /) -> EigResult:
    """The eigenvalues and right eigenvectors of each square matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    EigResult
        A named tuple (eigenvalues, eigenvectors), complex.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        No convergence (a ValueError).
    NotImplementedError
        On a GPU whose solver library has no general eigensolver (hipSOLVER): the message says so.

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (geev, where
    the library has it: cuSOLVER 12.8 or later) on a column-major copy, one call per matrix of a
    stack; float16 and bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linalg.eig(xp.asarray([[2.0, 0.0], [0.0, 3.0]], device="cpu")).eigenvalues
    Array([2.+0.j, 3.+0.j], dtype=complex128, device=cpu)
    """
    dtype = floating_matrices("eig", x, square=True)
    c = complex_of(dtype)
    return EigResult(*lapack("eig", [x], dtype, (c, c)))


def eigvals(x: Array, /) -> Array:
    """The eigenvalues of each square matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    Array
        Complex values, one row per matrix.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        No convergence (a ValueError).
    NotImplementedError
        On a GPU whose solver library has no geev.

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (geev without
    vectors) on a column-major copy, one call per matrix of a stack; float16 and bfloat16 are solved
    in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linalg.eigvals(xp.asarray([[2.0, 0.0], [0.0, 3.0]], device="cpu"))
    Array([2.+0.j, 3.+0.j], dtype=complex128, device=cpu)
    """
    dtype = floating_matrices("eigvals", x, square=True)
    return lapack("eigvals", [x], dtype, (complex_of(dtype),))[0]


def eigh(x: Array, /) -> EighResult:
    """The eigenvalues (ascending) and eigenvectors of each symmetric or Hermitian matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    EighResult
        A named tuple (eigenvalues, eigenvectors); eigenvalues real.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        No convergence (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (syevd or
    heevd; the lower triangle is read) on a column-major copy, one call per matrix of a stack;
    float16 and bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.eigh(a).eigenvalues
    Array([2.38196601, 4.61803399], dtype=float64, device=cpu)
    """
    dtype = floating_matrices("eigh", x, square=True)
    return EighResult(*lapack("eigh", [x], dtype, (real_of(dtype), dtype)))


def eigvalsh(x: Array, /) -> Array:
    """The eigenvalues (ascending) of each symmetric or Hermitian matrix.

    Parameters
    ----------
    x : Array
        A floating array of square matrices in its last two axes (a stack for more dimensions).

    Returns
    -------
    Array
        Real values.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or matrices that are not square.
    LinAlgError
        No convergence (a ValueError).

    Notes
    -----
    Devices: NumPy's LAPACK on ``cpu``; on a GPU cuSOLVER (NVIDIA) or hipSOLVER (AMD) (syevd or
    heevd without vectors) on a column-major copy, one call per matrix of a stack; float16 and
    bfloat16 are solved in float32.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.eigvalsh(a)
    Array([2.38196601, 4.61803399], dtype=float64, device=cpu)
    """
    dtype = floating_matrices("eigvalsh", x, square=True)
    return lapack("eigvalsh", [x], dtype, (real_of(dtype),))[0]


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f)
                     for f in (cholesky, qr, svd, svdvals, eig, eigvals, eigh, eigvalsh)]
