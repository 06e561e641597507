"""The set functions: unique_all / unique_counts / unique_inverse / unique_values, isin.

Uniqueness is value equality: every NaN is its own value (count 1), ``-0`` and
``+0`` are one. Values come out sorted (NaNs last). One back computes all four
outputs of ``unique_all`` (a sort yields them together); the fronts keep what
they return.
"""

from __future__ import annotations

from typing import NamedTuple, cast

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.axes import flag
from rocm_array.hookspecs import Impl
from rocm_array.operands import operands

from .backs import ISIN, UNIQUE
from .front_reduction import check_array


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def unique_all(x: Array, /) -> UniqueAllResult:
    """The unique values of ``x``, with the first index, inverse indices and count of each.

    Parameters
    ----------
    x : Array
        The input array.

    Returns
    -------
    UniqueAllResult
        A named tuple (values, indices, inverse_indices, counts); values sorted; inverse_indices of
        ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not an array.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the values are sorted (radix sort), runs are marked and
    compacted by a scan. NaNs are distinct from each other, as the standard says. The result's size
    is read back to the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> r = xp.unique_all(xp.asarray([3, 1, 3, 2], device="cpu"))
    >>> r.values, r.indices, r.counts
    (Array([1, 2, 3], dtype=int64, device=cpu), Array([1, 3, 0], dtype=int64, device=cpu), Array([1, 1, 2], dtype=int64, device=cpu))
    """
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The unique values of ``x`` and how often each occurs.

    Parameters
    ----------
    x : Array
        The input array.

    Returns
    -------
    UniqueCountsResult
        A named tuple (values, counts); values sorted.

    Raises
    ------
    TypeError
        ``x`` is not an array.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the values are sorted (radix sort), runs are marked and
    compacted by a scan. NaNs are distinct from each other, as the standard says. The result's size
    is read back to the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.unique_counts(xp.asarray([3, 1, 3, 2], device="cpu"))
    UniqueCountsResult(values=Array([1, 2, 3], dtype=int64, device=cpu), counts=Array([1, 1, 2], dtype=int64, device=cpu))
    """
    values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The unique values of ``x`` and, per element, the index of its value among them.

    Parameters
    ----------
    x : Array
        The input array.

    Returns
    -------
    UniqueInverseResult
        A named tuple (values, inverse_indices); inverse_indices of ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not an array.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the values are sorted (radix sort), runs are marked and
    compacted by a scan. NaNs are distinct from each other, as the standard says. The result's size
    is read back to the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.unique_inverse(xp.asarray([3, 1, 3, 2], device="cpu"))
    UniqueInverseResult(values=Array([1, 2, 3], dtype=int64, device=cpu), inverse_indices=Array([2, 0, 2, 1], dtype=int64, device=cpu))
    """
    values, _, inverse, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Array, /) -> Array:
    """The unique values of ``x``, sorted.

    Parameters
    ----------
    x : Array
        The input array.

    Returns
    -------
    Array
        A 1-D array of ``x``'s dtype.

    Raises
    ------
    TypeError
        ``x`` is not an array.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the values are sorted (radix sort), runs are marked and
    compacted by a scan. NaNs are distinct from each other, as the standard says. The result's size
    is read back to the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.unique_values(xp.asarray([3, 1, 3, 2], device="cpu"))
    Array([1, 2, 3], dtype=int64, device=cpu)
    """
    return _unique("unique_values", x)[0]


def _unique(name: str, x: Array) -> tuple[Array, Array, Array, Array]:
    check_array(name, x)
    return cast("tuple[Array, Array, Array, Array]", UNIQUE[x.device.kind](x))


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` is among the elements of ``x2``.

    Parameters
    ----------
    x1, x2 : Array or int
        At least one an array; compared after promotion.
    invert : bool, optional
        Give the opposite. Default: False.

    Returns
    -------
    Array
        A bool array of ``x1``'s shape.

    Raises
    ------
    TypeError
        Neither an array, or dtypes without a promoted dtype.
    ValueError
        Arrays on several devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU ``x2`` is sorted and each element of ``x1`` searched in it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.isin(xp.asarray([1, 2, 3, 4], device="cpu"), xp.asarray([2, 4], device="cpu"))
    Array([False,  True, False,  True], dtype=bool, device=cpu)
    """
    a1, a2 = operands("isin", (x1, x2))
    flag(invert, "isin", "invert")
    dtype = dtypes.result_type(a1.dtype, a2.dtype)
    return cast("Array", ISIN[a1.device.kind](a1, a2, dtype, invert))


IMPLS = [Impl(f.__name__, f) for f in (unique_all, unique_counts, unique_inverse, unique_values, isin)]
