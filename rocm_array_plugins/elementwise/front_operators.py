"""The elementwise functions as namespace entries: the rows of table.py, ``clip``, and in-place operators."""

from __future__ import annotations

from typing import Any

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.broadcast import broadcast_shapes
from rocm_array.dtypes import CATEGORIES, python_scalar
from rocm_array.hookspecs import Impl
from rocm_array.namespace import TABLE

from .table import BY_NAME, UFUNCS
from rocm_array.operands import check_bounds, promote

from .front_ufunc import Ufunc


def clip(x: Array, /, min: Array | int | float | None = None, max: Array | int | float | None = None) -> Array:
    """``x`` limited to the interval [min, max], in ``x``'s dtype.

    Parameters
    ----------
    x : Array
        A real-valued array.
    min, max : Array, int, float or None, optional
        Bounds (None: no bound); an array bound broadcasts with ``x``. Default: None.

    Returns
    -------
    Array
        A new array of ``x``'s shape and dtype; NaN in any operand gives NaN.

    Raises
    ------
    TypeError
        A complex or bool ``x``, a bound whose dtype would change x's, or a float bound for an
        integer ``x``.

    Notes
    -----
    Devices: the elementwise maximum and minimum kernels (NumPy on ``cpu``).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.clip(xp.asarray([-2.0, 0.5, 3.0], device="cpu"), 0.0, 1.0)
    Array([0. , 0.5, 1. ], dtype=float64, device=cpu)
    """
    if not isinstance(x, Array):
        raise TypeError(f"clip() expected an array for x, got {type(x).__name__}")
    if x.dtype not in CATEGORIES["real-valued"]:
        raise TypeError(f"clip() does not accept {x.dtype.name} input; it needs a real-valued dtype")
    min, max = python_scalar(min), python_scalar(max)
    for what, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (Array, bool, int, float)):
            raise TypeError(f"clip() {what} must be an array, an int, a float or None, got {type(bound).__name__}")
        if isinstance(bound, Array) and promote("clip", [x, bound]) != x.dtype:
            raise TypeError(f"clip() {what} of dtype {bound.dtype.name} does not fit x's {x.dtype.name}")
        if isinstance(bound, (float, complex)) and x.dtype.kind in "iu":  # the result keeps x's dtype
            raise TypeError(f"clip() {what}={bound!r} does not fit x's {x.dtype.name}; give an int bound")
        # Checked here too, so that the errors name clip, not the maximum and minimum it runs.
        if isinstance(bound, Array):
            broadcast_shapes(x.shape, bound.shape, name="clip")
        elif isinstance(bound, int):
            check_bounds(bound, x.dtype, "clip")
    out = x
    if min is not None:
        out = BY_NAME["maximum"](out, min)
    if max is not None:
        out = BY_NAME["minimum"](out, max)
    if out is x:  # neither bound: still a new array
        out = memory.empty(x.shape, x.dtype, x.device)
        memory.copy_into(out, x)
    return out


def inplace(fn_name: str, self: Array, other: Any) -> Array:
    """``self <op>= other``: the result must keep self's dtype and shape; written into self's buffer
    (by the back itself for the elementwise functions, else through a copy)."""
    self._check_writable(f"in-place {fn_name}")
    memory.before_write(self)
    fn = TABLE[fn_name]
    if isinstance(fn, Ufunc):
        return fn.into(self, self, other)
    result = fn(self, other)
    if result.dtype != self.dtype:
        raise TypeError(f"in-place {fn_name} would change the dtype from {self.dtype.name} to "
                        f"{result.dtype.name}")
    if result.shape != self.shape:
        raise ValueError(f"in-place {fn_name} would change the shape from {self.shape} to {result.shape}")
    memory.copy_into(self, result)
    return self


IMPLS: list[Impl] = [*(Impl(u.name, u) for u in UFUNCS), Impl("clip", clip), Impl("Array._inplace", inplace)]
