"""NumPy's nan-reductions (``np.nanmean``…, which xarray calls for the default ``skipna``), composed
from the namespace's functions on the array's device: NaN elements are left out by replacing them
with the reduction's identity (sum, prod) or by a mask (mean, var, max, argmax…)."""

from __future__ import annotations

from typing import Any, Callable, cast

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.axes import normalize_axes
from rocm_array.namespace import TABLE

from .ufuncs import finish, numpy_axis, numpy_dtype, numpy_only


def _masked(x: Array, value: float) -> tuple[Array, Array]:
    """``x`` with NaN elements replaced by ``value``, and the mask of the elements kept."""
    if x.dtype.kind not in "fc":
        return x, TABLE["ones_like"](x, dtype=dtypes.bool)
    keep = TABLE["logical_not"](TABLE["isnan"](x))
    return TABLE["where"](keep, x, value), keep


def _filled(name: str, identity: float) -> Callable[..., Any]:
    def adapter(a: Array, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
                initial: Any = np._NoValue, where: Any = np._NoValue) -> Any:
        numpy_only(f"nan{name}", initial=initial, where=where)
        x, _ = _masked(a, identity)
        return finish(f"nan{name}", TABLE[name](x, axis=numpy_axis(axis), dtype=numpy_dtype(dtype), keepdims=bool(keepdims)),
                      out, None)
    return adapter


def _count(keep: Array, axis: Any, keepdims: bool) -> Array:
    return cast("Array", TABLE["sum"](keep, axis=axis, keepdims=keepdims))


def nanmean(a: Array, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            *, where: Any = np._NoValue) -> Any:
    """The mean of the elements that are not NaN; NaN where there are none (as NumPy, without its warning)."""
    numpy_only("nanmean", where=where)
    axis = numpy_axis(axis)
    x, keep = _masked(a, 0.0)
    if x.dtype.kind in "iub":
        return finish("nanmean", TABLE["mean"](x, axis=axis, keepdims=bool(keepdims)), out, dtype)
    total = TABLE["sum"](x, axis=axis, keepdims=bool(keepdims))
    return finish("nanmean", TABLE["divide"](total, TABLE["astype"](_count(keep, axis, bool(keepdims)),
                                                                     dtypes.real_of(x.dtype))), out, dtype)


def _spread(name: str) -> Callable[..., Any]:
    def adapter(a: Array, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
                keepdims: bool = False, *, where: Any = np._NoValue, mean: Any = np._NoValue,
                correction: Any = np._NoValue) -> Any:
        numpy_only(f"nan{name}", where=where, mean=mean)
        axis = numpy_axis(axis)
        c = ddof if correction is np._NoValue else correction
        x, keep = _masked(a, 0.0)
        if x.dtype.kind in "iub":
            return finish(f"nan{name}", TABLE[name](x, axis=axis, correction=c, keepdims=bool(keepdims)), out, dtype)
        real = dtypes.real_of(x.dtype)
        n = TABLE["astype"](_count(keep, axis, True), real)
        centred = TABLE["where"](keep, TABLE["subtract"](x, TABLE["divide"](TABLE["sum"](x, axis=axis, keepdims=True), n)), 0.0)
        squares = TABLE["real"](TABLE["multiply"](centred, TABLE["conj"](centred))) if x.dtype.kind == "c" \
            else TABLE["multiply"](centred, centred)
        var = TABLE["divide"](TABLE["sum"](squares, axis=axis, keepdims=True), TABLE["subtract"](n, float(c)))
        var = TABLE["where"](TABLE["greater"](n, float(c)), var, float("nan"))
        if not keepdims:
            var = TABLE["squeeze"](var, axis=normalize_axes(axis, x.ndim, f"nan{name}"))
        return finish(f"nan{name}", var if name == "var" else TABLE["sqrt"](var), out, dtype)
    return adapter


def _extreme(name: str, fill: float) -> Callable[..., Any]:
    """nanmax, nanmin: NaN only where every element is NaN."""
    def adapter(a: Array, axis: Any = None, out: Any = None, keepdims: bool = False,
                initial: Any = np._NoValue, where: Any = np._NoValue) -> Any:
        numpy_only(f"nan{name}", initial=initial, where=where)
        axis = numpy_axis(axis)
        x, keep = _masked(a, fill)
        r = TABLE[name](x, axis=axis, keepdims=bool(keepdims))
        if x.dtype.kind == "f":
            r = TABLE["where"](TABLE["any"](keep, axis=axis, keepdims=bool(keepdims)), r, float("nan"))
        return finish(f"nan{name}", r, out, None)
    return adapter


def _arg(name: str, fill: float) -> Callable[..., Any]:
    """nanargmax, nanargmin: ValueError for an all-NaN slice, as NumPy."""
    def adapter(a: Array, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
        x, keep = _masked(a, fill)
        if axis is None:
            x, keep = TABLE["reshape"](x, (-1,)), TABLE["reshape"](keep, (-1,))
        if not bool(TABLE["all"](TABLE["any"](keep, axis=axis))):
            raise ValueError(f"nan{name}(): an all-NaN slice has no index")
        return finish(f"nan{name}", TABLE[name](x, axis=axis, keepdims=bool(keepdims)), out, None)
    return adapter


def _scan(name: str, identity: float) -> Callable[..., Any]:
    def adapter(a: Array, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        x, _ = _masked(a, identity)
        if axis is None:
            x, axis = TABLE["reshape"](x, (-1,)), 0
        return finish(f"nan{name}", TABLE[name](x, axis=axis, dtype=numpy_dtype(dtype)), out, None)
    return adapter


_INF = float("inf")
#: NumPy's nan-function -> its adapter.
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.nansum: _filled("sum", 0.0), np.nanprod: _filled("prod", 1.0), np.nanmean: nanmean,
    np.nanvar: _spread("var"), np.nanstd: _spread("std"),
    np.nanmax: _extreme("max", -_INF), np.nanmin: _extreme("min", _INF),
    np.nanargmax: _arg("argmax", -_INF), np.nanargmin: _arg("argmin", _INF),
    np.nancumsum: _scan("cumulative_sum", 0.0), np.nancumprod: _scan("cumulative_prod", 1.0),
}
