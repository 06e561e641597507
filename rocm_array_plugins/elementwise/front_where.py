"""``where``: elementwise choice between two operands (arrays or Python scalars)."""

from __future__ import annotations

from typing import Any, cast

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.broadcast import broadcast_shapes
from rocm_array.devices import check_same
from rocm_array.hookspecs import Impl

from .backs import WHERE
from rocm_array.operands import operands, promote


def where(condition: Array, x1: Any, x2: Any, /) -> Array:
    """Elements of ``x1`` where ``condition`` is true, else of ``x2``.

    Parameters
    ----------
    condition : Array
        A bool array.
    x1, x2 : Array or Python scalar
        The choices; broadcast with ``condition``; a scalar takes the other array's dtype as the
        standard says.

    Returns
    -------
    Array
        A new array of the broadcast shape and the choices' promoted dtype.

    Raises
    ------
    TypeError
        A condition that is not bool, or choices without a promoted dtype.
    ValueError
        Shapes that do not broadcast, or arrays on several devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; one kernel on a GPU (contiguous or strided).

    Examples
    --------
    >>> import rocm_array as xp
    >>> c = xp.asarray([True, False, True], device="cpu")
    >>> xp.where(c, xp.asarray([1, 2, 3], device="cpu"), 0)
    Array([1, 0, 3], dtype=int64, device=cpu)
    """
    if not isinstance(condition, Array):
        raise TypeError(f"where() expected an array for condition, got {type(condition).__name__}")
    if condition.dtype != dtypes.bool:
        raise TypeError(f"where() needs a bool condition, got {condition.dtype.name}")
    a, b = operands("where", (x1, x2))
    check_same(condition, a)
    dtype = promote("where", [a, b])
    shape = broadcast_shapes(condition.shape, a.shape, b.shape, name="where")
    return cast("Array", WHERE[condition.device.kind](condition, a, b, dtype, shape))

IMPLS: list[Impl] = [Impl("where", where)]
