"""Dask's dispatch tables for rocm_array chunks (``Dispatch.register``, Dask's extension point).

Dask counts the elements of a reduction (mean, var, std, their nan- forms) with ``numel`` and
``nannumel``. For a chunk type it does not know, it makes the counts NumPy arrays and then divides
our sums by them: a NumPy array beside ours, which rocm_array refuses. Registered here, the counts
are rocm_array arrays on the chunk's device. The same goes for ``dask.sizeof`` (a chunk's bytes) and
``distributed``'s serializers (``rocm_array.distributed.serialize``): each registration runs when its
module is imported, before or after rocm_array (``after_import``).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import math
import sys
from types import ModuleType
from typing import Any, Callable

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.axes import normalize_axes
from rocm_array.distributed import serialize as chunks
from rocm_array.namespace import TABLE

from .ufuncs import numpy_dtype

#: The module that holds Dask's dispatch tables.
MODULE = "dask.array.dispatch"


def numel(x: Array, axis: Any = None, keepdims: bool = False, dtype: Any = None, **_: Any) -> Any:
    """The number of elements a reduction over ``axis`` combines, shaped as its result."""
    axes = normalize_axes(axis, x.ndim, "numel")
    count = math.prod(x.shape[a] for a in axes)
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keepdims else \
        tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return TABLE["full"](shape, count, dtype=dtypes.float64 if dtype is None else numpy_dtype(dtype),
                         device=x.device)


def nannumel(x: Array, **kwargs: Any) -> Any:
    """The number of elements that are not NaN."""
    return TABLE["sum"](TABLE["logical_not"](TABLE["isnan"](x)), **kwargs)


def register(dispatch: ModuleType) -> None:
    dispatch.numel_lookup.register(Array, numel)
    dispatch.nannumel_lookup.register(Array, nannumel)


#: Each module with a table for our chunks, and what registers them in it.
HOOKS: dict[str, Callable[[ModuleType], None]] = {
    MODULE: register, "dask.sizeof": chunks.register_sizeof,
    "distributed.protocol.serialize": chunks.register_serializers}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then(module)`` once ``name`` has been imported (Python has no post-import hook)."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run, then = spec.loader.exec_module, self.then

        def exec_module(module: ModuleType) -> None:
            run(module)
            then(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_import() -> None:
    """Each of ``HOOKS`` now if its module is imported, else when it is."""
    for name, then in HOOKS.items():
        if name in sys.modules:
            then(sys.modules[name])
        elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
            sys.meta_path.insert(0, _AfterImport(name, then))
