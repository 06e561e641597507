"""Norms: vector_norm and matrix_norm (real results of the input's precision)."""

from __future__ import annotations

import math
from typing import Sequence

from rocm_array import memory
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
    keep = flag(keepdims, "vector_norm", "keepdims")
    if any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if a in axes else n for a, n in enumerate(x.shape) if keep or a not in axes)
        return _empty("vector_norm", ord, ord < 0, shape, x)
    return lapack("vector_norm", [x], dtype, (real_of(dtype),), axis=axes, keepdims=keep, ord=ord)[0]


def _empty(name: str, ord: object, undefined: bool, shape: tuple[int, ...], x: Array) -> Array:
    """The norm of empty vectors or matrices, alike on every device: 0 (a sum or a largest value of
    none), or a ValueError for a negative order, whose smallest value of none is undefined."""
    if undefined:
        raise ValueError(f"linalg.{name}(): ord={ord!r} of an empty {'vector' if name == 'vector_norm' else 'matrix'} "
                         f"is undefined (it takes the smallest of no values); use a positive order, or "
                         f"leave out the zero-size axis")
    return memory.full(shape, 0, real_of(x.dtype), x.device)


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
    keep = flag(keepdims, "matrix_norm", "keepdims")
    if x.shape[-2] == 0 or x.shape[-1] == 0:
        return _empty("matrix_norm", ord, not isinstance(ord, str) and ord < 0, x.shape[:-2] + ((1, 1) if keep else ()), x)
    return lapack("matrix_norm", [x], dtype, (real_of(dtype),), keepdims=keep, ord=ord)[0]


IMPLS: list[Impl] = [Impl(f"linalg.{f.__name__}", f) for f in (vector_norm, matrix_norm)]
