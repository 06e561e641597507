"""Checking and normalizing arguments (device independent): integers, bool flags, ``axis``/``axes``
and ``shape``."""

from __future__ import annotations

import operator
from typing import Literal, Sequence, overload

import numpy as np

__all__ = ["AxisError", "flag", "integer", "normalize_axis", "normalize_axes", "normalize_shape"]


class AxisError(ValueError, IndexError):
    """An axis out of range or repeated; both a ValueError and an IndexError, as NumPy's is."""


def integer(value: object, name: str, what: str) -> int:
    """``value`` as a Python int (anything with ``__index__`` but bool); TypeError naming ``what`` otherwise."""
    if isinstance(value, bool):
        raise TypeError(f"{name}(): {what} must be an integer, not bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name}(): {what} must be an integer, not {type(value).__name__}") from None


@overload
def flag(value: object, name: str, what: str) -> bool: ...
@overload
def flag(value: object, name: str, what: str, *, none: Literal[True]) -> bool | None: ...
def flag(value: object, name: str, what: str, *, none: bool = False) -> bool | None:
    """``value`` of a bool argument (``keepdims``, ``copy``…; None too where ``none``); TypeError
    naming ``what`` otherwise (a truthy string or int is a mistake, not a yes)."""
    if isinstance(value, bool) or (none and value is None):
        return value
    allowed = "a bool or None" if none else "a bool"
    raise TypeError(f"{name}(): {what} must be {allowed}, not {type(value).__name__}")


def normalize_axis(axis: object, ndim: int, name: str) -> int:
    """``axis`` as an index in ``[0, ndim)``; TypeError for a non-integer, AxisError out of range."""
    a = integer(axis, name, "axis")
    if not -ndim <= a < ndim:
        raise AxisError(f"{name}(): axis {a} is out of range for an array of {ndim} dimension(s)")
    return a % ndim


def normalize_axes(axes: int | Sequence[int] | None, ndim: int, name: str, *, none_is_all: bool = True) -> tuple[int, ...]:
    """``axes`` (None: all of them, unless ``none_is_all`` is False: a TypeError; an int: that
    one) as distinct indices in ``[0, ndim)``; AxisError out of range or repeated."""
    if axes is None and none_is_all:
        return tuple(range(ndim))
    if not isinstance(axes, (tuple, list)):
        return (normalize_axis(axes, ndim, name),)
    out = tuple(normalize_axis(a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise AxisError(f"{name}(): repeated axis in {tuple(axes)}")
    return out


#: The most dimensions an array may have (``capabilities()["max dimensions"]``): NumPy's own limit,
#: which the cpu device's arrays are; GPU arrays keep to it too, so code moves between devices.
MAX_DIMS = 64


def int_tuple(value: object, name: str, what: str = "shape", *, int_ok: bool = False) -> tuple[int, ...]:
    """``value``, a tuple or list of ints (not bools; also one int when ``int_ok``), as a tuple;
    TypeError naming ``what`` for anything else, ValueError past MAX_DIMS. Signs are the caller's to
    check (reshape takes -1)."""
    seq = (value,) if int_ok and not isinstance(value, (tuple, list)) else value
    if isinstance(seq, (tuple, list)) and not any(isinstance(n, (bool, np.bool_)) for n in seq):
        try:
            out = tuple(operator.index(n) for n in seq)
        except TypeError:
            pass
        else:
            if len(out) > MAX_DIMS:
                raise ValueError(f"{name}(): {what} has {len(out)} dimensions; arrays have at most {MAX_DIMS}")
            return out
    raise TypeError(f"{name}(): {what} must be {'an int or ' if int_ok else ''}a tuple of ints, got {value!r}")


def normalize_shape(shape: object, name: str) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints, not bools) as a tuple; ValueError for a negative size."""
    out = int_tuple(shape, name, int_ok=True)
    if any(n < 0 for n in out):
        raise ValueError(f"{name}(): negative dimensions are not allowed, got {shape!r}")
    return out
