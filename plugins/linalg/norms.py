"""Norms: vector_norm and matrix_norm (real results of the input's precision)."""

from __future__ import annotations

import math
from typing import Sequence

from rocm_array.array import Array
from rocm_array.axes import flag, normalize_axes
from rocm_array.dtypes import real_of
from rocm_array.hookspecs import Impl

from .backs import lapack
from .common import floating_matrices, operands

_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def vector_norm(x: Array, /, *, axis: int | Sequence[int] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:
    """The vector p-norm of ``x`` over ``axis``.

    Parameters
    ----------
    x : Array
        A floating array.
    axis : int, tuple of ints or None, optional
        None: all axes. Default: None.
    keepdims : bool, optional
        Default: False.
    ord : int or float, optional
        p (also inf, -inf, 0). Default: 2.

    Returns
    -------
    Array
        Real norms, of the real dtype of x's precision.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        An unknown ord.

    Notes
    -----
    Devices: the elementwise and reduction plugins' functions (kernels on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linalg.vector_norm(xp.asarray([3.0, 4.0], device="cpu"))
    Array(5., dtype=float64, device=cpu)
    """
    dtype = operands("vector_norm", x, category="floating-point")
    axes = normalize_axes(axis, x.ndim, "vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"vector_norm(): ord must be a real number, not {type(ord).__name__}")
    if math.isnan(ord):
        raise ValueError("vector_norm(): ord must not be NaN")
    return lapack("vector_norm", [x], dtype, (real_of(dtype),), axis=axes, keepdims=flag(keepdims, "vector_norm", "keepdims"), ord=ord)[0]


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: int | float | str | None = "fro") -> Array:
    """The matrix norm of each matrix in the last two axes.

    Parameters
    ----------
    x : Array
        A floating array of at least two dimensions; the last two are the matrices.
    keepdims : bool, optional
        Default: False.
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, optional
        Default: 'fro'.

    Returns
    -------
    Array
        Real norms, one per matrix.

    Raises
    ------
    TypeError
        An ``x`` that is not a floating array.
    ValueError
        Fewer than two dimensions, or an unknown ord.

    Notes
    -----
    Devices: reductions for 'fro', 1 and inf; ``svdvals`` (gesvd on a GPU) for 'nuc' and 2.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]], device="cpu")
    >>> xp.linalg.matrix_norm(a, ord=1)
    Array(5., dtype=float64, device=cpu)
    """
    dtype = floating_matrices("matrix_norm", x)
    if isinstance(ord, bool) or ord not in _MATRIX_ORDS:
        raise ValueError(f"matrix_norm(): ord must be one of {_MATRIX_ORDS}, got {ord!r}")
    return lapack("matrix_norm", [x], dtype, (real_of(dtype),), keepdims=flag(keepdims, "matrix_norm", "keepdims"), ord=ord)[0]


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f) for f in (vector_norm, matrix_norm)]
