"""The set functions: unique_all / unique_counts / unique_inverse / unique_values, isin.

Uniqueness is value equality: every NaN is its own value (count 1), ``-0`` and
``+0`` are one. Values come out sorted (NaNs last). One back computes all four
outputs of ``unique_all`` (a sort yields them together); the fronts keep what
they return.
"""

from __future__ import annotations

from typing import NamedTuple

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise.ufunc import operands

from .backs import ISIN, UNIQUE
from .front import check_array, check_flag


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
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    values, _, inverse, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Array, /) -> Array:
    return _unique("unique_values", x)[0]


def _unique(name: str, x: Array) -> tuple[Array, Array, Array, Array]:
    check_array(name, x)
    return UNIQUE[x.device.kind](x)


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` equals one of ``x2`` (a Python int is a 0-D array)."""
    a1, a2 = operands("isin", (x1, x2))
    check_flag("isin", "invert", invert)
    dtype = dtypes.result_type(a1.dtype, a2.dtype)
    return ISIN[a1.device.kind](a1, a2, dtype, invert)


IMPLS = [Impl(f.__name__, f) for f in (unique_all, unique_counts, unique_inverse, unique_values, isin)]
