"""NumPy's own implementation of a call that rocm_array has none for, on cpu arrays' elements.

A NumPy function or ufunc called on rocm_array arrays runs its adapter (``functions.FUNCTIONS``,
``ufuncs``). Where there is none for the call (no adapter, a NumPy-only argument, a NumPy array
beside ours), the one rule is: on ``cpu`` NumPy runs it as on any array it can view without a copy,
since a cpu array's elements are NumPy memory (the cpu backs compute with NumPy too); its ndarray
results come back as cpu Arrays, so a caller gets rocm_array arrays from NumPy's functions whether
an adapter or NumPy did the work. A gpu array, or a cpu array under ``ROCM_ARRAY_STRICT_HOST=1``,
is refused with a TypeError naming the function, the array and the fix: no host copy is made
behind the caller's back.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array, numpy_may_view, wrap_numpy


class Unsupported(TypeError):
    """A call an adapter does not take, with the fix in its message: NumPy runs it on cpu arrays,
    and it is raised as it is for arrays NumPy may not view (``numpy_may_view``)."""


def call(name: str, run: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
         reason: Unsupported | None = None) -> Any:
    """``run(*args, **kwargs)`` by NumPy, on views of the Arrays among the arguments (in lists and
    tuples too), its ndarray results as cpu Arrays. ``reason``: why no adapter took the call,
    raised when an Array may not be viewed; without one, the refusal says NumPy's ``name`` has no
    rocm_array implementation."""
    views: dict[int, tuple[np.ndarray, Array]] = {}

    def to_numpy(obj: Any) -> Any:
        if isinstance(obj, Array):
            if not numpy_may_view(obj):
                if reason is not None:
                    raise reason
                raise TypeError(
                    f"numpy.{name}() has no rocm_array implementation, and NumPy may not read a {obj.dtype.name} "
                    f"array on {obj.device} in place; call the namespace's functions (x.__array_namespace__()), "
                    "or copy the array to the host explicitly: np.from_dlpack(x.to_device('cpu'))"
                    + (" (ROCM_ARRAY_STRICT_HOST=1 makes cpu arrays refuse too)" if obj.device.kind == "cpu" else ""))
            view = np.asarray(obj)  # the cpu array's own NumPy view: no copy
            views[id(view)] = (view, obj)
            return view
        return _each(obj, to_numpy)

    np_args = tuple(to_numpy(a) for a in args)
    np_kwargs = {k: to_numpy(v) for k, v in kwargs.items()}
    return _ours(run(*np_args, **np_kwargs), views)


def _ours(result: Any, views: dict[int, tuple[np.ndarray, Array]]) -> Any:
    """NumPy's result with its ndarrays as cpu Arrays: an argument's own view (``out=``) as that
    Array, others wrapped (sharing memory); dtypes rocm_array has not (strings, objects) stay NumPy's."""
    if type(result) is np.ndarray:  # subclasses (masked arrays, matrices) keep their meaning
        if id(result) in views:
            return views[id(result)][1]
        try:
            dtype = dtypes.from_numpy(result.dtype)
        except TypeError:
            return result
        return wrap_numpy(result, dtype)
    return _each(result, lambda r: _ours(r, views))


def _each(obj: Any, f: Callable[[Any], Any]) -> Any:
    """``f`` of each item of a list or tuple (named ones keep their type), nested; others as they are."""
    if isinstance(obj, list):
        return [f(o) for o in obj]
    if isinstance(obj, tuple):
        items = [f(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    return obj
