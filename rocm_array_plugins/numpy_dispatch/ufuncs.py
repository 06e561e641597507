"""NEP 13: NumPy's ufuncs on Arrays, one row per ufunc (its namespace function), and the
``reduce`` and ``accumulate`` methods of the ufuncs whose reductions the namespace has. A call
without a row (another ufunc or method, NumPy-only arguments, a NumPy array operand) is NumPy's
on cpu arrays and refused on others (``host``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.namespace import TABLE

from . import host

#: NumPy ufunc name -> namespace function, where the names differ.
RENAMED: dict[str, str] = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "conjugate": "conj", "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift", "power": "pow",
    "true_divide": "divide", "fabs": "abs", "rint": "round", "mod": "remainder",
}
#: NumPy ufuncs whose names are the namespace's.
SAME: frozenset[str] = frozenset({
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "negative", "positive",
    "sign", "sqrt", "square", "exp", "expm1", "log", "log1p", "log2", "log10", "logaddexp", "sin", "cos",
    "tan", "sinh", "cosh", "tanh", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "signbit",
    "copysign", "hypot", "maximum", "minimum", "nextafter", "reciprocal", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "matmul",
})
#: ``ufunc.reduce`` -> the namespace's reduction; ``ufunc.accumulate`` -> its scan.
REDUCE: dict[str, str] = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                          "logical_and": "all", "logical_or": "any"}
ACCUMULATE: dict[str, str] = {"add": "cumulative_sum", "multiply": "cumulative_prod"}


def operand(fn: str, value: Any) -> Any:
    """An Array or Python scalar as the namespace takes it; ``host.Unsupported`` for a NumPy array."""
    if isinstance(value, np.ndarray):
        raise host.Unsupported(f"numpy.{fn}() mixes a NumPy array with rocm_array arrays; convert it first "
                               "with xp.asarray(a, device=x.device)")
    return dtypes.python_scalar(value)


def numpy_only(fn: str, **given: Any) -> None:
    """``host.Unsupported`` for NumPy-only arguments given other than at their defaults (None,
    False, _NoValue; ``where=True``)."""
    bad = [k for k, v in given.items()
           if v is not None and v is not np._NoValue and v is not False and not (k == "where" and v is True)]
    if bad:
        raise host.Unsupported(f"numpy.{fn}(): {', '.join(bad)} not supported on rocm_array arrays; "
                               "call the xp function instead")


def numpy_axis(axis: Any) -> Any:
    """NumPy's ``axis=`` as the namespace takes it (a list of axes becomes a tuple)."""
    return tuple(axis) if isinstance(axis, list) else axis


def numpy_dtype(dtype: Any) -> Any:
    """A NumPy spelling of a dtype (``"f8"``, ``np.float64``, ours) as our dtype; None stays None."""
    if dtype is None or isinstance(dtype, dtypes.DType):
        return dtype
    try:
        return dtypes.check_dtype(np.dtype(dtype))
    except TypeError:
        raise TypeError(f"NumPy dtype {dtype!r} has no rocm_array counterpart") from None


def finish(fn: str, result: Array, out: Any, dtype: Any) -> Any:
    """``result`` cast to ``dtype=`` and written to ``out=`` when NumPy's caller gave them."""
    if dtype is not None:
        result = TABLE["astype"](result, numpy_dtype(dtype))
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) else out
    if not isinstance(target, Array):
        raise host.Unsupported(f"numpy.{fn}(): out= must be a rocm_array array, not {type(target).__name__}")
    TABLE["Array.__setitem__"](target, ..., result)
    return target


def dispatch(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
    try:
        result = _ours(ufunc, method, inputs, dict(kwargs))
    except host.Unsupported as e:
        return host.call(name, getattr(ufunc, method), inputs, kwargs, e)
    return host.call(name, getattr(ufunc, method), inputs, kwargs) if result is NotImplemented else result


def _ours(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The namespace's function for the call; NotImplemented where it has none."""
    name = ufunc.__name__
    out, dtype = kwargs.pop("out", None), kwargs.pop("dtype", None)
    if kwargs.pop("where", True) is not True or kwargs.pop("casting", "same_kind") != "same_kind" or \
            kwargs.pop("subok", True) is not True or kwargs.pop("order", "K") != "K":
        raise host.Unsupported(f"numpy.{name}(): where=, casting=, order= and subok= are not supported on "
                               "rocm_array arrays; call the xp function instead")
    args = [operand(name, a) for a in inputs]
    if method == "__call__":
        fn = RENAMED.get(name, name if name in SAME else None)
        if fn is None or kwargs:
            return NotImplemented
        return finish(name, TABLE[fn](*args), out, dtype)
    if method in ("reduce", "accumulate") and len(args) == 1:
        fn = (REDUCE if method == "reduce" else ACCUMULATE).get(name)
        if fn is None:
            return NotImplemented
        axis, keepdims = kwargs.pop("axis", 0), kwargs.pop("keepdims", False)
        if kwargs.pop("initial", np._NoValue) is not np._NoValue or kwargs:
            return NotImplemented
        x = args[0]
        if method == "accumulate":
            return finish(name, TABLE[fn](x, axis=axis), out, dtype)
        return finish(name, TABLE[fn](x, axis=numpy_axis(axis),
                                      keepdims=keepdims), out, dtype)
    return NotImplemented
