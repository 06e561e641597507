"""The cpu backs of the reduction plugin: NumPy does the work.

The fronts have already chosen every dtype and answered empty reductions;
these functions compute in the dtypes given and cast NumPy's results to the
front's dtype, so NumPy's own promotion never leaks out.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.dtypes import DType

from . import backs

if TYPE_CHECKING:
    from .front_cumulative import Scan
    from .front_reduction import Reduction



def _host(x: Array, dtype: DType) -> np.ndarray:
    """``x``'s elements in ``dtype``'s compute dtype, a NumPy view where no cast is needed."""
    with np.errstate(all="ignore"):
        return x._np.astype(dtypes.compute_dtype(dtype).numpy, copy=False)


def _wrap(r: Any, dtype: DType) -> Array:
    """A new Array of ``dtype`` from a NumPy result (copied: it may be a view of an input)."""
    with np.errstate(all="ignore"):
        return wrap_numpy(np.asarray(r).astype(dtype.numpy), dtype)


def reduce(row: Reduction, x: Array, axes: tuple[int, ...], keepdims: bool, compute: DType,
           out_dtype: DType, options: dict[str, Any]) -> Array:
    # argmax/argmin take one axis or None (every axis) in NumPy.
    axis: Any = axes if row.axis == "many" else (axes[0] if len(axes) == 1 else None)
    with np.errstate(all="ignore"):
        r = row.numpy(_host(x, compute), axis=axis, keepdims=keepdims, **options)
    return _wrap(r, out_dtype)


def mean(a: np.ndarray, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> np.ndarray:
    """NumPy's mean, but a complex one divides each part by the count, as the GPU's mean_op does:
    NumPy divides by count + 0j, which turns an infinite part's partner into NaN (mean([inf, 1j])
    was inf + nanj, the GPU's inf + 0.5j)."""
    if a.dtype.kind != "c":
        return cast("np.ndarray", np.mean(a, axis=axis, keepdims=keepdims, dtype=dtype))
    s = np.asarray(np.sum(a, axis=axis, keepdims=keepdims, dtype=dtype))
    n = math.prod(a.shape[i] for i in (range(a.ndim) if axis is None else axis))  # (the front's axes tuple)
    out = np.empty_like(s)
    out.real, out.imag = s.real / n if n else np.nan, s.imag / n if n else np.nan
    return out


def scan(row: Scan, x: Array, axis: int, compute: DType, out_dtype: DType) -> Array:
    with np.errstate(all="ignore"):
        return _wrap(row.numpy(_host(x, compute), axis=axis), out_dtype)


def diff(x: Array, axis: int) -> Array:
    with np.errstate(all="ignore"):
        return _wrap(np.diff(_host(x, x.dtype), axis=axis), x.dtype)


def argsort(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    return _wrap(_order(x, axis, descending, stable), dtypes.DEFAULT_INDEX)


def sort(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    a = _host(x, x.dtype)
    return _wrap(np.take_along_axis(a, _order(x, axis, descending, stable), axis), x.dtype)


def _order(x: Array, axis: int, descending: bool, stable: bool) -> np.ndarray:
    """The indices that sort ``x`` along ``axis``; NaNs last in both orders."""
    key = _host(x, x.dtype)
    if descending:
        # An order-reversing key (as a radix sort uses) keeps ties in input order and NaNs
        # last; ~ reverses every integer type without overflow.
        key = -key if x.dtype.kind == "f" else ~key
    return np.argsort(key, axis=axis, kind="stable" if stable else None)


def unique(x: Array) -> tuple[Array, Array, Array, Array]:
    """values, first indices, inverse indices (x's shape) and counts; NaNs distinct, ±0 one value."""
    values, first, inverse, counts = np.unique(_host(x, x.dtype).reshape(-1), return_index=True,
                                               return_inverse=True, return_counts=True, equal_nan=False)
    index = dtypes.DEFAULT_INDEX
    return (_wrap(values, x.dtype), _wrap(first, index), _wrap(inverse.reshape(x.shape), index),
            _wrap(counts, index))


def isin(x1: Array, x2: Array, dtype: DType, invert: bool) -> Array:
    return _wrap(np.isin(_host(x1, dtype), _host(x2, dtype), invert=invert), dtypes.bool)


def searchsorted(x1: Array, x2: Array, dtype: DType, side: str, sorter: Array | None) -> Array:
    order = None if sorter is None else sorter._np.astype(np.intp)
    return _wrap(np.searchsorted(_host(x1, dtype), _host(x2, dtype), side="right" if side == "right" else "left",
                                 sorter=order),
                 dtypes.DEFAULT_INDEX)


def nonzero(x: Array) -> tuple[Array, ...]:
    return tuple(_wrap(i, dtypes.DEFAULT_INDEX) for i in np.nonzero(_host(x, x.dtype)))


def register() -> None:
    """Fill the ``cpu`` column of the plugin's tables."""
    backs.REDUCE["cpu"], backs.SCAN["cpu"], backs.DIFF["cpu"] = reduce, scan, diff
    backs.NONZERO["cpu"], backs.SEARCHSORTED["cpu"] = nonzero, searchsorted
    backs.SORT["cpu"], backs.ARGSORT["cpu"], backs.UNIQUE["cpu"], backs.ISIN["cpu"] = sort, argsort, unique, isin
