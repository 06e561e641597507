"""sort and argsort.

Order: ascending or descending by value, NaNs last in both; ``-0`` and ``+0``
compare equal (ties). Stable sorts keep ties in input order; unstable ones
need not (the cpu back then uses NumPy's introsort).
"""

from __future__ import annotations

from typing import cast

from rocm_array.array import Array
from rocm_array.axes import flag, normalize_axis
from rocm_array.hookspecs import Impl

from .backs import ARGSORT, SORT
from .front_reduction import check_array, check_category


def _checked(name: str, x: Array, axis: int, descending: bool, stable: bool) -> tuple[int, bool, bool]:
    check_category(name, check_array(name, x), "real-valued")
    return (normalize_axis(axis, x.ndim, name), flag(descending, name, "descending"),
            flag(stable, name, "stable"))


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """The indices that sort ``x`` along ``axis``.

    Parameters
    ----------
    x : Array
        A real-valued array.
    axis : int, optional
        Default: -1.
    descending : bool, optional
        Largest first (ties keep their order). Default: False.
    stable : bool, optional
        Equal elements keep their order (always). Default: True.

    Returns
    -------
    Array
        An int64 array of ``x``'s shape.

    Raises
    ------
    TypeError
        A complex or non-array ``x``, or flags that are not bool.
    AxisError
        An axis out of range (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU a least-significant-digit radix sort (onesweep: one pass per
    digit with decoupled look-back, ``rocm_array_kernels/reduction/sort.hip``) of keys made order-preserving
    (floats' bits flipped; NaN sorts last), stable, with the indices carried along.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.argsort(xp.asarray([3.0, -1.0, 2.0], device="cpu"))
    Array([1, 2, 0], dtype=int64, device=cpu)
    """
    args = _checked("argsort", x, axis, descending, stable)
    return cast("Array", ARGSORT[x.device.kind](x, *args))


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """The elements of ``x`` sorted along ``axis``.

    Parameters
    ----------
    x : Array
        A real-valued array.
    axis : int, optional
        Default: -1.
    descending : bool, optional
        Largest first. Default: False.
    stable : bool, optional
        Equal elements keep their order (the sort is always stable). Default: True.

    Returns
    -------
    Array
        A new array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        A complex or non-array ``x``, or flags that are not bool.
    AxisError
        An axis out of range (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU a least-significant-digit radix sort (onesweep: one pass per
    digit with decoupled look-back, ``rocm_array_kernels/reduction/sort.hip``) of keys made order-preserving
    (floats' bits flipped; NaN sorts last), stable, with the indices carried along.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.sort(xp.asarray([3.0, -1.0, 2.0], device="cpu"))
    Array([-1.,  2.,  3.], dtype=float64, device=cpu)
    """
    args = _checked("sort", x, axis, descending, stable)
    return cast("Array", SORT[x.device.kind](x, *args))


IMPLS = [Impl("argsort", argsort), Impl("sort", sort)]
