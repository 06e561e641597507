"""NEP 18: NumPy's functions on Arrays, one adapter per function (``FUNCTIONS``).

Each adapter takes NumPy's signature and calls the namespace's function. Arguments NumPy has and
the namespace has not (``out=`` aside, which is written to) are accepted at their defaults. A call
no adapter takes (a function without one, a NumPy-only argument, a NumPy array among the arrays)
is NumPy's on cpu arrays and refused with a TypeError on gpu arrays (``host``): no array is copied.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Sequence, cast

import numpy as np

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.axes import normalize_axis
from rocm_array.namespace import TABLE

from . import host, nan
from .ufuncs import finish, numpy_axis, numpy_dtype, numpy_only, operand

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}


def implements(*functions: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def add(adapter: Callable[..., Any]) -> Callable[..., Any]:
        for f in functions:
            FUNCTIONS[f] = adapter
        return adapter
    return add


def dispatch(self: Array, func: Callable[..., Any], types: Sequence[type], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    if not all(issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented  # another array type's override may take the call
    adapter = FUNCTIONS.get(func)
    if adapter is None:
        return host.call(func.__name__, func, args, kwargs)
    try:
        # NEP 35: ``np.asarray(a, like=x)`` reaches x's method without its like=
        return adapter(*args, **({**kwargs, "like": self} if func in LIKE else kwargs))
    except host.Unsupported as e:
        return host.call(func.__name__, func, args, kwargs, e)


def _array(fn: str, a: Any, like: Array | None = None) -> Array:
    """``a`` as an Array: Arrays as they are, Python sequences and scalars on ``like``'s device."""
    if isinstance(a, Array):
        return a
    a = operand(fn, a)
    return cast("Array", TABLE["asarray"](a, device=None if like is None else like.device))


def _flat(x: Array) -> Array:
    return cast("Array", TABLE["reshape"](x, (-1,)))


# -- reductions --------------------------------------------------------------------------------------
def _reduction(np_fn: Callable[..., Any], name: str) -> None:
    def adapter(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
                initial: Any = np._NoValue, where: Any = np._NoValue) -> Any:
        numpy_only(np_fn.__name__, initial=initial, where=where)
        kw = {"dtype": numpy_dtype(dtype)} if name in ("sum", "prod") else {}
        r = TABLE[name](_array(name, a), axis=numpy_axis(axis), keepdims=bool(keepdims), **kw)
        return finish(np_fn.__name__, r, out, dtype if name not in ("sum", "prod") else None)
    implements(np_fn)(adapter)


for _np_fn, _name in ((np.sum, "sum"), (np.prod, "prod"), (np.max, "max"), (np.amax, "max"),
                      (np.min, "min"), (np.amin, "min"), (np.mean, "mean"), (np.all, "all"), (np.any, "any")):
    _reduction(_np_fn, _name)


def _spread_of(np_fn: Callable[..., Any], name: str) -> None:
    def adapter(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
                keepdims: bool = False, *, where: Any = np._NoValue, mean: Any = np._NoValue,
                correction: Any = np._NoValue) -> Any:
        numpy_only(name, where=where, mean=mean)
        c = ddof if correction is np._NoValue else correction
        r = TABLE[name](_array(name, a), axis=numpy_axis(axis), correction=c, keepdims=bool(keepdims))
        return finish(name, r, out, dtype)
    implements(np_fn)(adapter)


_spread_of(np.std, "std")
_spread_of(np.var, "var")


def _arg_of(np_fn: Callable[..., Any], name: str) -> None:
    def adapter(a: Any, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
        x = _array(name, a)
        if axis is None and x.ndim > 1:
            x = _flat(x)
        return finish(name, TABLE[name](x, axis=axis, keepdims=bool(keepdims)), out, None)
    implements(np_fn)(adapter)


_arg_of(np.argmax, "argmax")
_arg_of(np.argmin, "argmin")


def _scan_of(np_fn: Callable[..., Any], name: str) -> None:
    def adapter(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        x = _array(name, a)
        if axis is None:
            x, axis = _flat(x), 0
        return finish(np_fn.__name__, TABLE[name](x, axis=axis, dtype=numpy_dtype(dtype)), out, None)
    implements(np_fn)(adapter)


_scan_of(np.cumsum, "cumulative_sum")
_scan_of(np.cumprod, "cumulative_prod")


@implements(np.count_nonzero)
def _count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return TABLE["count_nonzero"](_array("count_nonzero", a), axis=numpy_axis(axis), keepdims=keepdims)


for _np_fn, _nan_fn in nan.FUNCTIONS.items():
    implements(_np_fn)(_nan_fn)


# -- creation like another array --------------------------------------------------------------------
def _like_of(np_fn: Callable[..., Any], name: str, filled: bool) -> None:
    def adapter(a: Any, *args: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                shape: Any = None, device: Any = None) -> Any:
        x = _array(np_fn.__name__, a)
        value = args[0] if filled and args else None
        if filled and not args:
            raise TypeError("numpy.full_like() missing fill_value")
        if dtype is None and len(args) > int(filled):
            dtype = args[int(filled)]
        dt = x.dtype if dtype is None else numpy_dtype(dtype)
        size = x.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
        if filled:
            return TABLE["full"](size, dtypes.python_scalar(value), dtype=dt, device=x.device)
        return TABLE[name](size, dtype=dt, device=x.device)
    implements(np_fn)(adapter)


_like_of(np.zeros_like, "zeros", False)
_like_of(np.ones_like, "ones", False)
_like_of(np.empty_like, "empty", False)
_like_of(np.full_like, "full", True)


@implements(np.copy)
def _copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    return TABLE["asarray"](_array("copy", a), copy=True)


# -- NEP 35: creation ``like=`` an Array, on its device -------------------------------------------------
def _host(obj: Any, dtype: Any, like: Array) -> Array:
    """``obj`` (an Array, a NumPy array, a sequence or scalar) on ``like``'s device: the caller
    asked for that device by ``like=``."""
    dt = numpy_dtype(dtype)
    if isinstance(obj, Array):
        return cast("Array", TABLE["asarray"](obj, dtype=dt, device=like.device))
    host = np.asarray(obj)
    dt = dtypes.from_numpy(host.dtype) if dt is None else dt
    return memory.from_host(np.ascontiguousarray(host, dt.numpy), dt, like.device)


@implements(np.asarray, np.asanyarray, np.ascontiguousarray)
def _asarray(a: Any, dtype: Any = None, order: Any = None, *, like: Array, **kwargs: Any) -> Any:
    return _host(a, dtype, like)


@implements(np.array)
def _np_array(object: Any, dtype: Any = None, *, copy: bool = True, order: Any = "K", subok: bool = False,
              ndmin: int = 0, like: Array, **kwargs: Any) -> Any:
    x = _host(object, dtype, like)
    return TABLE["asarray"](x, copy=True) if copy and x is object else x


def _creation_of(np_fn: Callable[..., Any], name: str) -> None:
    def adapter(shape: Any, *args: Any, dtype: Any = None, order: str = "C", like: Array, **kwargs: Any) -> Any:
        value = args[:1] if name == "full" else ()
        if dtype is None and len(args) > len(value):
            dtype = args[len(value)]
        if name == "full" and not value:
            value = (kwargs.pop("fill_value"),)
        dt = numpy_dtype(dtype)
        if dt is None:  # NumPy's default: float64, or the fill value's type
            dt = dtypes.float64 if name != "full" else None
        size = (shape,) if isinstance(shape, int) else tuple(shape)
        return TABLE[name](size, *(dtypes.python_scalar(v) for v in value), dtype=dt, device=like.device)
    implements(np_fn)(adapter)


_creation_of(np.empty, "empty")
_creation_of(np.zeros, "zeros")
_creation_of(np.ones, "ones")
_creation_of(np.full, "full")
#: The functions that take ``like=`` (NEP 35), whose adapters create on ``like``'s device.
LIKE: frozenset[Any] = frozenset({np.asarray, np.asanyarray, np.ascontiguousarray, np.array, np.empty, np.zeros, np.ones,
                  np.full, np.arange})


@implements(np.arange)
def _arange(*args: Any, dtype: Any = None, like: Array, **kwargs: Any) -> Any:
    return TABLE["arange"](*(dtypes.python_scalar(a) for a in args), dtype=numpy_dtype(dtype), device=like.device,
                           **kwargs)


# -- shapes, joins and layout ---------------------------------------------------------------------------
@implements(np.ndim)
def _ndim(a: Any) -> int:
    return builtins.len(a.shape)


@implements(np.shape)
def _shape(a: Any) -> tuple[int, ...]:
    return cast("tuple[int, ...]", a.shape)


@implements(np.size)
def _size(a: Any, axis: int | None = None) -> int:
    return cast("int", a.size if axis is None else a.shape[axis])


@implements(np.reshape)
def _reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: Any = None) -> Any:
    numpy_only("reshape", order=None if order == "C" else order)
    size = newshape if shape is None else shape
    return TABLE["reshape"](_array("reshape", a), (size,) if isinstance(size, int) else tuple(size), copy=copy)


@implements(np.ravel)
def _ravel(a: Any, order: str = "C") -> Any:
    numpy_only("ravel", order=None if order == "C" else order)
    return _flat(_array("ravel", a))


@implements(np.transpose)
def _transpose(a: Any, axes: Any = None) -> Any:
    x = _array("transpose", a)
    return TABLE["permute_dims"](x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes))


@implements(np.moveaxis)
def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    return TABLE["moveaxis"](_array("moveaxis", a), source, destination)


@implements(np.swapaxes)
def _swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    x = _array("swapaxes", a)
    order = list(range(x.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return TABLE["permute_dims"](x, tuple(order))


@implements(np.squeeze)
def _squeeze(a: Any, axis: Any = None) -> Any:
    x = _array("squeeze", a)
    if axis is None:
        axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
    return TABLE["squeeze"](x, axis=numpy_axis(axis))


@implements(np.expand_dims)
def _expand_dims(a: Any, axis: Any) -> Any:
    return TABLE["expand_dims"](_array("expand_dims", a), axis=numpy_axis(axis))


def _atleast_of(np_fn: Callable[..., Any], depth: int) -> None:
    def adapter(*arys: Any) -> Any:
        out = []
        for a in arys:
            x = _array(np_fn.__name__, a)
            while x.ndim < depth:  # NumPy's placement: 1-D (n,) -> (1, n) -> (1, n, 1)
                x = TABLE["expand_dims"](x, axis=-1 if x.ndim == 2 else 0)
            out.append(x)
        return out[0] if len(out) == 1 else out
    implements(np_fn)(adapter)


_atleast_of(np.atleast_1d, 1)
_atleast_of(np.atleast_2d, 2)
_atleast_of(np.atleast_3d, 3)


@implements(np.broadcast_to)
def _broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    return TABLE["broadcast_to"](_array("broadcast_to", array), (shape,) if isinstance(shape, int) else tuple(shape))


@implements(np.broadcast_arrays)
def _broadcast_arrays(*args: Any, subok: bool = False) -> Any:
    return tuple(TABLE["broadcast_arrays"](*(_array("broadcast_arrays", a) for a in args)))


@implements(np.concatenate)
def _concatenate(arrays: Any, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
                 casting: str = "same_kind") -> Any:
    xs = [_array("concatenate", a) for a in arrays]
    if axis is None:
        xs, axis = [_flat(x) for x in xs], 0
    return finish("concatenate", TABLE["concat"](xs, axis=axis), out, dtype)


@implements(np.stack)
def _stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    return finish("stack", TABLE["stack"]([_array("stack", a) for a in arrays], axis=axis), out, dtype)


@implements(np.flip)
def _flip(m: Any, axis: Any = None) -> Any:
    return TABLE["flip"](_array("flip", m), axis=numpy_axis(axis))


@implements(np.roll)
def _roll(a: Any, shift: Any, axis: Any = None) -> Any:
    return TABLE["roll"](_array("roll", a), numpy_axis(shift), axis=numpy_axis(axis))


@implements(np.tile)
def _tile(A: Any, reps: Any) -> Any:
    return TABLE["tile"](_array("tile", A), (reps,) if isinstance(reps, int) else tuple(reps))


@implements(np.repeat)
def _repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    return TABLE["repeat"](_array("repeat", a), operand("repeat", repeats), axis=axis)


@implements(np.tril)
def _tril(m: Any, k: int = 0) -> Any:
    return TABLE["tril"](_array("tril", m), k=k)


@implements(np.triu)
def _triu(m: Any, k: int = 0) -> Any:
    return TABLE["triu"](_array("triu", m), k=k)


# -- selection, sorting, searching ------------------------------------------------------------------------
@implements(np.where)
def _where(condition: Any, *xy: Any) -> Any:
    c = _array("where", condition)
    if not xy:
        return TABLE["nonzero"](c)
    if len(xy) != 2:
        raise ValueError("numpy.where(): give both x and y, or neither")
    return TABLE["where"](c, *(operand("where", v) for v in xy))


@implements(np.nonzero)
def _nonzero(a: Any) -> Any:
    return TABLE["nonzero"](_array("nonzero", a))


@implements(np.clip)
def _clip(a: Any, a_min: Any = np._NoValue, a_max: Any = np._NoValue, out: Any = None, *,
          min: Any = np._NoValue, max: Any = np._NoValue, **kwargs: Any) -> Any:
    lo = None if a_min is np._NoValue else a_min
    hi = None if a_max is np._NoValue else a_max
    lo = lo if min is np._NoValue else min
    hi = hi if max is np._NoValue else max
    r = TABLE["clip"](_array("clip", a), operand("clip", lo), operand("clip", hi))
    return finish("clip", r, out, kwargs.pop("dtype", None))


@implements(np.round, np.around)
def _round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    numpy_only("round", decimals=operator.index(decimals) or None)
    return finish("round", TABLE["round"](_array("round", a)), out, None)


@implements(np.take)
def _take(a: Any, indices: Any, axis: int | None = None, out: Any = None, mode: str = "raise") -> Any:
    x = _array("take", a)
    if axis is None:
        x, axis = _flat(x), 0
    if isinstance(indices, (int, np.integer)):
        return TABLE["Array.__getitem__"](x, (slice(None),) * normalize_axis(axis, x.ndim, "take") + (int(indices),))
    i = indices if isinstance(indices, Array) else TABLE["asarray"](np.asarray(indices), device=x.device)
    return finish("take", TABLE["take"](x, i, axis=axis), out, None)


@implements(np.sort)
def _sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
    numpy_only("sort", order=order)
    x = _array("sort", a)
    if axis is None:
        x, axis = _flat(x), 0
    return TABLE["sort"](x, axis=axis, stable=bool(stable or kind == "stable"))


@implements(np.argsort)
def _argsort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
    numpy_only("argsort", order=order)
    x = _array("argsort", a)
    if axis is None:
        x, axis = _flat(x), 0
    return TABLE["argsort"](x, axis=axis, stable=bool(stable or kind == "stable"))


@implements(np.unique)
def _unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
            axis: Any = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:
    numpy_only("unique", return_index=return_index, axis=axis)
    x = _array("unique", ar)
    if return_inverse and return_counts:
        u = TABLE["unique_all"](x)
        return u.values, TABLE["reshape"](u.inverse_indices, x.shape), u.counts
    if return_inverse:
        u = TABLE["unique_inverse"](x)
        return u.values, TABLE["reshape"](u.inverse_indices, x.shape)
    if return_counts:
        return tuple(TABLE["unique_counts"](x))
    return TABLE["unique_values"](x)


@implements(np.searchsorted)
def _searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    numpy_only("searchsorted", sorter=sorter)
    x = _array("searchsorted", a)
    return TABLE["searchsorted"](x, _array("searchsorted", v, x), side=side)


@implements(np.diff)
def _diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue, append: Any = np._NoValue) -> Any:
    x = _array("diff", a)
    kw = {k: _array("diff", v, x) for k, v in (("prepend", prepend), ("append", append)) if v is not np._NoValue}
    return TABLE["diff"](x, axis=axis, n=n, **kw)


@implements(np.isin)
def _isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
          kind: Any = None) -> Any:
    x = _array("isin", element)
    return TABLE["isin"](x, _array("isin", test_elements, x), invert=invert)


# -- comparisons and products -----------------------------------------------------------------------------
def _close(a: Any, b: Any, rtol: float, atol: float, equal_nan: bool) -> Array:
    x = _array("isclose", a)
    y = _array("isclose", b, x)
    fine = TABLE["less_equal"](TABLE["abs"](TABLE["subtract"](x, y)),
                               TABLE["add"](TABLE["multiply"](TABLE["abs"](y), float(rtol)), float(atol)))
    fine = TABLE["logical_or"](fine, TABLE["equal"](x, y))  # equal infinities
    if equal_nan:
        fine = TABLE["logical_or"](fine, TABLE["logical_and"](TABLE["isnan"](x), TABLE["isnan"](y)))
    return cast("Array", fine)


@implements(np.isclose)
def _isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    return _close(a, b, rtol, atol, equal_nan)


@implements(np.allclose)
def _allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(TABLE["all"](_close(a, b, rtol, atol, equal_nan)))


@implements(np.array_equal)
def _array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    x = _array("array_equal", a1)
    y = _array("array_equal", a2, x)
    if x.shape != y.shape:
        return False
    same = TABLE["equal"](x, y)
    if equal_nan:
        same = TABLE["logical_or"](same, TABLE["logical_and"](TABLE["isnan"](x), TABLE["isnan"](y)))
    return bool(TABLE["all"](same))


@implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Any:
    x = _array("dot", a)
    y = _array("dot", b, x)
    if x.ndim == 0 or y.ndim == 0:
        r = TABLE["multiply"](x, y)
    elif y.ndim <= 2:
        r = TABLE["matmul"](x, y)
    else:
        r = TABLE["tensordot"](x, y, axes=([-1], [-2]))
    return finish("dot", r, out, None)


@implements(np.tensordot)
def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    x = _array("tensordot", a)
    return TABLE["tensordot"](x, _array("tensordot", b, x), axes=axes)


@implements(np.outer)
def _outer(a: Any, b: Any, out: Any = None) -> Any:
    x = _flat(_array("outer", a))
    y = _flat(_array("outer", b, x))
    return finish("outer", TABLE["multiply"](TABLE["reshape"](x, (-1, 1)), y), out, None)


@implements(np.result_type)
def _result_type(*arrays_and_dtypes: Any) -> Any:
    return TABLE["result_type"](*(dtypes.python_scalar(a) for a in arrays_and_dtypes))


@implements(np.astype)
def _astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    return TABLE["astype"](_array("astype", x), numpy_dtype(dtype), copy=copy, device=device)


# -- NumPy's array methods, which engines call on chunks (``x.sum(axis=0)``) ----------------------------
def _varargs(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A method that takes its sequence as several arguments too: ``x.reshape(2, 3)``, ``x.transpose(1, 0)``."""
    def method(self: Array, *args: Any, **kwargs: Any) -> Any:
        if len(args) > 1 and all(isinstance(a, (int, np.integer)) for a in args):
            args = (tuple(args),)
        return fn(self, *args, **kwargs)
    return method


def _item(self: Array, *args: Any) -> Any:
    """The element at ``args`` (or the only one) as a Python scalar."""
    x = TABLE["Array.__getitem__"](self, args) if args else self
    if x.size != 1:
        raise ValueError(f"item(): the array has {x.size} elements; give an index")
    x = TABLE["reshape"](x, ())
    kind = x.dtype.kind
    return bool(x) if kind == "b" else int(x) if kind in "iu" else complex(x) if kind == "c" else float(x)


def _tolist(self: Array) -> Any:
    return np.from_dlpack(self.to_device("cpu")).tolist()


def _flatten(self: Array, order: str = "C") -> Any:
    return TABLE["asarray"](_ravel(self, order), copy=True)


#: NumPy's ndarray methods an Array has (``Array.<name>``), each its NumPy function's adapter.
METHODS: dict[str, Callable[..., Any]] = {
    **{name: FUNCTIONS[getattr(np, name)] for name in (
        "sum", "prod", "max", "min", "mean", "std", "var", "all", "any", "argmax", "argmin", "cumsum",
        "cumprod", "clip", "round", "take", "nonzero", "argsort", "repeat", "swapaxes", "squeeze", "ravel",
        "copy", "dot", "astype", "searchsorted")},
    "reshape": _varargs(FUNCTIONS[np.reshape]),
    "transpose": _varargs(lambda a, axes=None: _transpose(a, axes)),
    "item": _item,
    "tolist": _tolist,
    "flatten": _flatten,
    "conj": lambda self: TABLE["conj"](self),
}
