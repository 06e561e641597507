"""Operands: Python scalars beside arrays, as the standard types them, on one device.

A Python scalar operand takes the dtype the standard gives it beside the arrays (``dtypes.scalar_dtype``)
and their device; an int out of that dtype's range is an OverflowError naming the function. Every
plugin whose functions take arrays and scalars together (elementwise, where, searchsorted, the set
functions) reads its operands here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes, memory
from .array import Array
from .devices import check_same
from .dtypes import SCALARS, DType

__all__ = ["check_bounds", "Scalar", "promote", "scalar_operands", "operands", "scalar_array"]


def check_bounds(value: bool | int | float | complex, dtype: DType, name: str = "") -> None:
    """OverflowError (naming the function ``name`` when given) when ``value`` is a Python int
    outside the integer dtype ``dtype``."""
    if dtype.kind in "iu" and not isinstance(value, bool):
        lo, hi = dtypes.int_bounds(dtype)
        if not lo <= value <= hi:  # type: ignore[operator]
            raise OverflowError(f"{name + '(): ' if name else ''}Python int {value} is out of bounds for "
                                f"{dtype.name} ({lo} to {hi}); use a value in range, or an array of a wider dtype")


class Scalar:
    """A Python scalar operand, with the dtype the standard gives it beside the arrays and their device.

    Elementwise functions hand it to their back as it is: the gpu back passes the value
    to the kernel (no allocation, no fill), others take the 0-D array ``array()`` makes.
    """

    __slots__ = ("value", "dtype", "_device")  # _device as Array names it: the hot path reads either
    shape: tuple[int, ...] = ()
    ndim = 0

    def __init__(self, value: bool | int | float | complex, dtype: DType, device: Any, name: str = "") -> None:
        check_bounds(value, dtype, name)  # (name: the function it is an operand of, for the message)
        self.value = value
        self.dtype = dtype
        self._device = device

    @property
    def device(self) -> Any:
        return self._device

    def array(self) -> Array:
        return memory.full((), self.value, self.dtype, self._device)


def promote(name: str, arrays: list[Array] | list[Array | Scalar]) -> DType:
    """The promoted dtype of ``arrays``; TypeError naming ``name`` when the standard defines none."""
    try:
        return dtypes.result_type(*(a.dtype for a in arrays))
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None


def scalar_operands(name: str, args: tuple[Any, ...]) -> list[Array | Scalar]:
    """``args`` on one device: Python scalars become Scalars of the dtype the standard gives them."""
    like = None
    for a in args:
        if isinstance(a, Array):
            like = a
            break
    if like is None:
        raise TypeError(f"{name}() needs at least one array argument, got "
                        + ", ".join(type(a).__name__ for a in args))
    out: list[Array | Scalar] = []
    for a in args:
        a = dtypes.python_scalar(a)
        if isinstance(a, Array):
            if a.device is not like.device and a.device != like.device:
                check_same(like, a)
            out.append(a)
        elif isinstance(a, SCALARS):
            try:
                dtype = dtypes.scalar_dtype(a, like.dtype)
            except TypeError as e:
                raise TypeError(f"{name}(): {e}") from None
            out.append(Scalar(a, dtype, like.device, name))
        elif isinstance(a, np.ndarray):
            raise TypeError(f"{name}() got a NumPy array; convert it first with "
                            f"xp.asarray(a, device={str(like.device)!r})")
        else:
            raise TypeError(f"{name}() expected arrays or Python scalars, got {type(a).__name__}")
    return out


def operands(name: str, args: tuple[Any, ...]) -> list[Array]:
    """``args`` as arrays on one device: Python scalars become 0-D arrays per the standard;
    ValueError for arrays on different devices."""
    return [a.array() if isinstance(a, Scalar) else a for a in scalar_operands(name, args)]


def scalar_array(value: bool | int | float | complex, dtype: DType, like: Array, name: str = "") -> Array:
    """A 0-D array of ``dtype`` on ``like``'s device; OverflowError (naming ``name``) for an int out of range."""
    return Scalar(value, dtype, like.device, name).array()


