"""sort and argsort.

Order: ascending or descending by value, NaNs last in both; ``-0`` and ``+0``
compare equal (ties). Stable sorts keep ties in input order; unstable ones
need not (the cpu back then uses NumPy's introsort).
"""

from __future__ import annotations

from rocm_array.array import Array
from rocm_array.axes import normalize_axis
from rocm_array.hookspecs import Impl

from .backs import ARGSORT, SORT
from .front import check_array, check_category, check_flag


def _checked(name: str, x: Array, axis: int, descending: bool, stable: bool) -> tuple[int, bool, bool]:
    check_category(name, check_array(name, x), "real-valued")
    return (normalize_axis(axis, x.ndim, name), check_flag(name, "descending", descending),
            check_flag(name, "stable", stable))


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    args = _checked("argsort", x, axis, descending, stable)
    return ARGSORT[x.device.kind](x, *args)


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    args = _checked("sort", x, axis, descending, stable)
    return SORT[x.device.kind](x, *args)


IMPLS = [Impl("argsort", argsort), Impl("sort", sort)]
