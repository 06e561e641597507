"""The ``numpy_dispatch`` plugin: NumPy's functions and ufuncs called on rocm_array arrays.

NEP 13 (``__array_ufunc__``) and NEP 18 (``__array_function__``) let engines written for NumPy
(Dask, xarray) call ``np.sum(chunk)`` or ``np.nanmean(x)`` on our arrays: each call runs the
namespace's function on the array's device, and its result stays a rocm_array array. A call no
row here takes is NumPy's own on cpu arrays, its results back as cpu arrays, and a TypeError on gpu
arrays (``host``): no array is copied to the host.
Unlike the other plugins, this one calls the assembled namespace (``TABLE``): ``np.sum(x)`` means
what ``xp.sum(x)`` means to the user, third-party overrides included.
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import dask, functions, ufuncs


@hookimpl
def rocm_array_functions() -> list[Impl]:
    dask.after_import()
    return [Impl("Array.__array_ufunc__", ufuncs.dispatch), Impl("Array.__array_function__", functions.dispatch),
            *(Impl(f"Array.{name}", method) for name, method in functions.METHODS.items())]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ["elementwise"]
