"""``where``: elementwise choice between two operands (arrays or Python scalars)."""

from __future__ import annotations

from typing import Any

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.broadcast import broadcast_shapes
from rocm_array.devices import check_same
from rocm_array.hookspecs import Impl

from .backs import WHERE
from .ufunc import operands, promote


def where(condition: Array, x1: Any, x2: Any, /) -> Array:
    """``x1`` where ``condition`` is True, else ``x2``; the dtype promotes x1 with x2."""
    if not isinstance(condition, Array):
        raise TypeError(f"where() expected an array for condition, got {type(condition).__name__}")
    if condition.dtype != dtypes.bool:
        raise TypeError(f"where() needs a bool condition, got {condition.dtype.name}")
    a, b = operands("where", (x1, x2))
    check_same(condition, a)
    dtype = promote("where", [a, b])
    shape = broadcast_shapes(condition.shape, a.shape, b.shape)
    return WHERE[condition.device.kind](condition, a, b, dtype, shape)

IMPLS: list[Impl] = [Impl("where", where)]
