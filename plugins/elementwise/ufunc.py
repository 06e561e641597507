"""One declarative object per elementwise function, all sharing one call path.

The front (argument kinds, Python scalars, dtype category, promotion,
broadcasting, result dtype) is the same on every device; the back is chosen by
the device kind: ``cpu`` runs the row's NumPy function, ``gpu`` launches the
row's kernel functor.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.backs import Backs
from rocm_array.broadcast import broadcast_shapes
from rocm_array.devices import check_same
from rocm_array.dtypes import CATEGORIES, DType

from . import cpu

#: The Python scalar types that mix with arrays (the standard's rules are in ``dtypes.scalar_dtype``).
SCALARS = (bool, int, float, complex)

#: How a row's result dtype follows from the promoted input dtype.
RESULT_RULES: dict[str, Callable[[DType], DType]] = {
    "same": lambda d: d,
    # comparisons, logical functions, isnan/isinf/isfinite, signbit.
    "bool": lambda d: dtypes.bool,
    # abs, real, imag: a complex input gives the real dtype of its precision; others keep theirs.
    "real": dtypes.real_of,
}


@dataclass(frozen=True)
class Ufunc:
    """An elementwise function: one row of ``table.py``.

    ``category`` names the dtypes it admits (a key of ``dtypes.CATEGORIES``);
    ``result`` a key of ``RESULT_RULES``; ``numpy`` the cpu back's function (a
    NumPy ufunc, or a wrapper in ``cpu.py`` where NumPy departs from the
    standard); ``functor`` the kernel functor in ``kernels/elementwise`` the gpu
    back launches. float16 and bfloat16 compute in float32 and round once,
    unless ``widen_half`` is False (``nextafter`` must step in the dtype itself).
    """

    name: str
    arity: int
    category: str
    numpy: Callable[..., Any]
    functor: str
    result: str = "same"
    widen_half: bool = True

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES or self.result not in RESULT_RULES:
            raise ValueError(f"row {self.name!r}: unknown category or result rule")

    # Introspection (inspect.signature, help) sees the standard's positional-only parameters.
    @property
    def __name__(self) -> str:
        return self.name

    @property
    def __signature__(self) -> inspect.Signature:
        names = ("x",) if self.arity == 1 else tuple(f"x{i}" for i in range(1, self.arity + 1))
        return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])

    def __call__(self, *args: Any) -> Array:
        if len(args) != self.arity:
            raise TypeError(f"{self.name}() takes {self.arity} positional argument(s), got {len(args)}")
        arrays = operands(self.name, args)
        for a in arrays:
            if a.dtype not in CATEGORIES[self.category]:
                raise TypeError(f"{self.name}() does not accept {a.dtype.name} input; "
                                f"it needs a {self.category} dtype")
        dtype = promote(self.name, arrays)
        shape = broadcast_shapes(*(a.shape for a in arrays))
        out_dtype = RESULT_RULES[self.result](dtype)
        return BACKS[arrays[0].device.kind](self, arrays, dtype, out_dtype, shape)


def promote(name: str, arrays: list[Array]) -> DType:
    """The promoted dtype of ``arrays``; TypeError naming ``name`` when the standard defines none."""
    try:
        return dtypes.result_type(*(a.dtype for a in arrays))
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None


def operands(name: str, args: tuple[Any, ...]) -> list[Array]:
    """``args`` as arrays on one device: Python scalars become 0-D arrays per the standard."""
    like = next((a for a in args if isinstance(a, Array)), None)
    if like is None:
        raise TypeError(f"{name}() needs at least one array argument, got "
                        + ", ".join(type(a).__name__ for a in args))
    out = []
    for a in args:
        if isinstance(a, Array):
            out.append(a)
        elif isinstance(a, SCALARS):
            try:
                dtype = dtypes.scalar_dtype(a, like.dtype)
            except TypeError as e:
                raise TypeError(f"{name}(): {e}") from None
            out.append(scalar_array(a, dtype, like))
        else:
            raise TypeError(f"{name}() expected arrays or Python scalars, got {type(a).__name__}")
    if len(out) > 1:
        check_same(*out)
    return out


def scalar_array(value: bool | int | float | complex, dtype: DType, like: Array) -> Array:
    """A 0-D array of ``dtype`` on ``like``'s device; OverflowError for an int out of range."""
    if dtype.kind in "iu" and not isinstance(value, bool):
        info = dtypes.int_bounds(dtype)
        if not info[0] <= value <= info[1]:
            raise OverflowError(f"Python int {value} is out of bounds for {dtype.name}")
    return memory.full((), value, dtype, like.device)


BACKS = Backs("elementwise functions", cpu=cpu.ufunc)
