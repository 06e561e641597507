"""Norms: vector_norm and matrix_norm (real results of the input's precision)."""

from __future__ import annotations

import math
from typing import Sequence

from rocm_array.array import Array
from rocm_array.axes import normalize_axes
from rocm_array.dtypes import real_of
from rocm_array.hookspecs import Impl

from .backs import lapack
from .common import floating_matrices, operands

_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def vector_norm(x: Array, /, *, axis: int | Sequence[int] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:
    """The ``ord``-norm over ``axis`` (None: all axes); ``ord`` any real number or ±inf."""
    dtype = operands("vector_norm", x, category="floating-point")
    axes = normalize_axes(axis, x.ndim, "vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"vector_norm(): ord must be a real number, not {type(ord).__name__}")
    if math.isnan(ord):
        raise ValueError("vector_norm(): ord must not be NaN")
    return lapack("vector_norm", [x], dtype, (real_of(dtype),), axis=axes, keepdims=bool(keepdims), ord=ord)[0]


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: int | float | str | None = "fro") -> Array:
    """The ``ord`` norm of each matrix: 'fro', 'nuc', ±1, ±2 or ±inf."""
    dtype = floating_matrices("matrix_norm", x)
    if isinstance(ord, bool) or ord not in _MATRIX_ORDS:
        raise ValueError(f"matrix_norm(): ord must be one of {_MATRIX_ORDS}, got {ord!r}")
    return lapack("matrix_norm", [x], dtype, (real_of(dtype),), keepdims=bool(keepdims), ord=ord)[0]


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f) for f in (vector_norm, matrix_norm)]
