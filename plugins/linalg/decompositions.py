"""Factorizations and spectra: cholesky, qr, svd, svdvals, eig, eigvals, eigh, eigvalsh.

Each front checks the operand (a floating-point stack of matrices) and names
the result dtypes; the device's LAPACK-class back computes them.
"""

from __future__ import annotations

from typing import NamedTuple

from rocm_array.array import Array
from rocm_array.dtypes import complex_of, real_of
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
    """The lower (or upper) Cholesky factor; LinAlgError when not positive definite."""
    dtype = floating_matrices("cholesky", x, square=True)
    return lapack("cholesky", [x], dtype, (dtype,), upper=bool(upper))[0]


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    dtype = floating_matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr(): mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*lapack("qr", [x], dtype, (dtype, dtype), mode=mode))


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    dtype = floating_matrices("svd", x)
    return SVDResult(*lapack("svd", [x], dtype, (dtype, real_of(dtype), dtype), full_matrices=bool(full_matrices)))


def svdvals(x: Array, /) -> Array:
    dtype = floating_matrices("svdvals", x)
    return lapack("svdvals", [x], dtype, (real_of(dtype),))[0]


def eig(x: Array, /) -> EigResult:
    """Eigenvalues and eigenvectors of general matrices, always complex."""
    dtype = floating_matrices("eig", x, square=True)
    c = complex_of(dtype)
    return EigResult(*lapack("eig", [x], dtype, (c, c)))


def eigvals(x: Array, /) -> Array:
    dtype = floating_matrices("eigvals", x, square=True)
    return lapack("eigvals", [x], dtype, (complex_of(dtype),))[0]


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices; reads the lower triangle."""
    dtype = floating_matrices("eigh", x, square=True)
    return EighResult(*lapack("eigh", [x], dtype, (real_of(dtype), dtype)))


def eigvalsh(x: Array, /) -> Array:
    dtype = floating_matrices("eigvalsh", x, square=True)
    return lapack("eigvalsh", [x], dtype, (real_of(dtype),))[0]


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f)
                     for f in (cholesky, qr, svd, svdvals, eig, eigvals, eigh, eigvalsh)]
