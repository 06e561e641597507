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
    """The inverses; LinAlgError for a singular matrix."""
    dtype = floating_matrices("inv", x, square=True)
    return lapack("inv", [x], dtype, (dtype,))[0]


def solve(x1: Array, x2: Array, /) -> Array:
    """Solve ``x1 @ X = x2``.

    A 1-D ``x2`` of shape (M,) is one right-hand side for every matrix of
    ``x1`` (the result has shape ``x1.shape[:-2] + (M,)``); otherwise ``x2``
    is a stack (..., M, K) whose batch broadcasts with ``x1``'s.
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
        return broadcast_view(rtol, x.shape[:-2])
    if isinstance(rtol, (int, float)) and not isinstance(rtol, bool):
        return float(rtol)
    raise TypeError(f"{name}(): rtol must be a float, an array or None, not {type(rtol).__name__}")


def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Pseudo-inverses; singular values up to ``rtol`` times the largest count as zero."""
    dtype = floating_matrices("pinv", x)
    return lapack("pinv", [x], dtype, (dtype,), rtol=_rtol("pinv", rtol, x))[0]


def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Number of singular values above ``rtol`` times the largest (default ``max(M, N) * eps``)."""
    dtype = floating_matrices("matrix_rank", x)
    return lapack("matrix_rank", [x], dtype, (dtypes.DEFAULT_INT,), rtol=_rtol("matrix_rank", rtol, x))[0]


def det(x: Array, /) -> Array:
    dtype = floating_matrices("det", x, square=True)
    return lapack("det", [x], dtype, (dtype,))[0]


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and log of the absolute determinant; (0, -inf) for a singular matrix."""
    dtype = floating_matrices("slogdet", x, square=True)
    return SlogdetResult(*lapack("slogdet", [x], dtype, (dtype, real_of(dtype))))


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f) for f in (inv, solve, pinv, matrix_rank, det, slogdet)]
