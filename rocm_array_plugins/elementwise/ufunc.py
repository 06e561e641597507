"""One declarative object per elementwise function, all sharing one call path.

The front (argument kinds, Python scalars, dtype category, promotion,
broadcasting, result dtype) is the same on every device; the back is chosen by
the device kind: ``cpu`` runs the row's NumPy function, ``gpu`` launches the
row's kernel functor. A back may also offer a lane (``LANES``): a call resolved
for one combination of operand kinds, which later calls of that combination take
without the front.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, TYPE_CHECKING, cast

import numpy as np

from rocm_array import dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.broadcast import broadcast_shapes
from rocm_array.devices import check_same
from rocm_array.dtypes import CATEGORIES, SCALARS, DType

from rocm_array.docstrings import RowDoc
from rocm_array.namespace import by_name

from . import docs
from .backs import LANES, UFUNC


#: How a row's result dtype follows from the promoted input dtype.
RESULT_RULES: dict[str, Callable[[DType], DType]] = {
    "same": lambda d: d,
    # comparisons, logical functions, isnan/isinf/isfinite, signbit.
    "bool": lambda d: dtypes.bool,
    # abs, real, imag: a complex input gives the real dtype of its precision; others keep theirs.
    "real": dtypes.real_of,
}


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


@dataclass(frozen=True)
class Ufunc:
    """An elementwise function: one row of ``table.py``.

    ``category`` names the dtypes it admits (a key of ``dtypes.CATEGORIES``);
    ``result`` a key of ``RESULT_RULES``; ``numpy`` the cpu back's function (a
    NumPy ufunc, or a wrapper in ``cpu.py`` where NumPy departs from the
    standard); ``functor`` the kernel functor in ``rocm_array_kernels/elementwise`` the gpu
    back launches. float16 and bfloat16 compute in float32 and round once,
    unless ``widen_half`` is False (``nextafter`` must step in the dtype itself).
    ``integers``, when set, admits integer operands beyond ``category`` and computes
    them in that dtype (``divide``: the default floating dtype, as NumPy, CuPy and
    PyTorch do). ``scalar_check``, when set, vets a Python scalar operand:
    ``check(value, position, dtype)`` raises for values the function refuses.
    ``doc`` is the row's one-line summary; a row's ``__doc__`` is rendered from its fields.
    """

    name: str
    arity: int
    category: str
    numpy: Callable[..., Any]
    functor: str
    result: str = "same"
    widen_half: bool = True
    integers: DType | None = None
    scalar_check: Callable[[Any, int, DType], None] | None = None
    doc: str = ""  # the one-line summary that opens the rendered docstring (``docs.ufunc_doc``)
    # operand dtypes -> (promoted dtype, result dtype): each combination is checked once
    _types: dict[tuple[DType, ...], tuple[DType, DType]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False)
    if TYPE_CHECKING:  # (per instance, set by __post_init__; ClassVar keeps it out of the fields)
        # (device runtime, operand kinds) -> the back's lane for them, or None (see ``__call__``)
        _lanes: ClassVar[dict[tuple[Any, ...], Callable[..., Array] | None]]

    __doc__ = RowDoc(__doc__, docs.ufunc_doc)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return by_name, (self.name,)

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES or self.result not in RESULT_RULES:
            raise ValueError(f"row {self.name!r}: unknown category or result rule")
        # Not a field: dataclasses.asdict (array-api-tests' reporting calls it on the rows it is
        # given as parameters) deep-copies every field, and runtimes do not copy.
        object.__setattr__(self, "_lanes", {})

    # Introspection (inspect.signature, help) sees the standard's positional-only parameters.
    @property
    def __name__(self) -> str:
        return self.name

    @property
    def __signature__(self) -> inspect.Signature:
        names = ("x",) if self.arity == 1 else tuple(f"x{i}" for i in range(1, self.arity + 1))
        operand = "Array" if self.arity == 1 else "Array | bool | int | float | complex"
        return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY, annotation=operand)
                                  for n in names], return_annotation="Array")

    def _front(self, args: tuple[Any, ...]) -> tuple[list[Array | Scalar], DType, DType, tuple[int, ...]]:
        """The operands, the promoted and result dtypes, and the broadcast shape."""
        if len(args) != self.arity:
            raise TypeError(f"{self.name}() takes {self.arity} positional argument(s), got {len(args)}")
        a0 = args[0]
        shape = None
        if type(a0) is Array and self.arity == 1:
            arrays: list[Array | Scalar] = [a0]  # the common cases, without _operands' checks
            key: tuple[DType, ...] = (a0._dtype,)
            shape = a0._shape
        elif type(a0) is Array and type(args[1]) is Array and args[1]._device is a0._device:
            a1 = args[1]
            arrays = [a0, a1]
            key = (a0._dtype, a1._dtype)
            if a0._shape == a1._shape:
                shape = a0._shape
        else:
            arrays = _operands(self.name, args)
            key = tuple([a.dtype for a in arrays])
            if self.scalar_check is not None:
                for i, a in enumerate(arrays):
                    if type(a) is Scalar:
                        self.scalar_check(a.value, i, arrays[1 - i].dtype)
        types = self._types.get(key)
        if types is None:
            integers = self.integers
            for a in arrays:
                if a.dtype not in CATEGORIES[self.category] and not (integers and a.dtype.kind in "iu"):
                    raise TypeError(f"{self.name}() does not accept {a.dtype.name} input; "
                                    f"it needs a {self.category} dtype")
            dtype = promote(self.name, arrays)
            if integers is not None and dtype.kind in "iu":
                dtype = integers
            types = self._types[key] = (dtype, RESULT_RULES[self.result](dtype))
        if shape is None:
            s0 = arrays[0].shape
            if self.arity == 1:
                shape = s0
            else:
                s1 = arrays[1].shape
                shape = s0 if s0 == s1 or not s1 else s1 if not s0 else broadcast_shapes(s0, s1, name=self.name)
        return arrays, types[0], types[1], shape

    def __call__(self, *args: Any, **kwargs: Any) -> Array:
        if kwargs:  # (NumPy habits: out=, dtype=; about 17 ns a call to say so by name)
            raise TypeError(f"{self.name}() takes no keyword arguments, got {', '.join(kwargs)}" + "".join(
                hint.format(self.name) for word, hint in _KEYWORD_HINTS.items() if word in kwargs))
        # Operands of a kind the back has a lane for (see ``_lane_key``) skip the front's work,
        # done once for their dtypes by the first call, and go straight to the lane.
        key = _lane_key(args, self.arity, self.scalar_check is None)
        if key is not None:
            lane = self._lanes.get(key)
            if lane is not None:
                return lane(*args)
        arrays, dtype, out_dtype, shape = self._front(args)
        kind = arrays[0]._device.kind
        if key is not None and key not in self._lanes:
            make = LANES.get(kind)
            self._lanes[key] = make and make(self, arrays[0]._device, key[1:], dtype, out_dtype)
        return cast("Array", UFUNC[kind](self, arrays, dtype, out_dtype, shape))

    def into(self, out: Array, *args: Any) -> Array:
        """``out[...] = self(*args)``, written into ``out`` (the in-place operators): the result
        must have out's dtype (TypeError) and shape (ValueError)."""
        arrays, dtype, out_dtype, shape = self._front(args)
        if out_dtype != out.dtype:
            raise TypeError(f"in-place {self.name} would change the dtype from {out.dtype.name} to "
                            f"{out_dtype.name}")
        if shape != out.shape:
            raise ValueError(f"in-place {self.name} would change the shape from {out.shape} to {shape}")
        check_same(out, arrays[0])
        return cast("Array", UFUNC[out.device.kind](self, arrays, dtype, out_dtype, shape, out))


#: What to write instead of the NumPy keywords the elementwise functions do not take.
_KEYWORD_HINTS = {"out": "; for out=, write into it: out[...] = xp.{0}(...)",
                  "dtype": "; for dtype=, convert the inputs first with xp.astype"}


def _lane_key(args: tuple[Any, ...], arity: int, scalars: bool = True) -> tuple[Any, ...] | None:
    """The device runtime and operand kinds (a dtype, or a Python scalar's type) of ``arity``
    operands that a lane may take: row-major Arrays of one shape on one device, and a Python
    scalar beside one (unless ``scalars`` is False: a row that vets its scalars); None for any
    other operands."""
    if len(args) != arity:
        return None
    a0 = args[0]
    if arity == 1:
        if type(a0) is Array and a0._strides == contiguous_strides(a0._shape):
            return (a0._device._runtime, a0._dtype)
        return None
    a1 = args[1]
    if type(a0) is Array:
        if a0._strides != contiguous_strides(a0._shape):
            return None
        if type(a1) is Array:
            if a1._device is a0._device and a1._shape == a0._shape and a1._strides == a0._strides:
                return (a0._device._runtime, a0._dtype, a1._dtype)
            return None
        return (a0._device._runtime, a0._dtype, type(a1)) if scalars and type(a1) in SCALARS else None
    if scalars and type(a1) is Array and type(a0) in SCALARS and a1._strides == contiguous_strides(a1._shape):
        return (a1._device._runtime, type(a0), a1._dtype)
    return None


def promote(name: str, arrays: list[Array] | list[Array | Scalar]) -> DType:
    """The promoted dtype of ``arrays``; TypeError naming ``name`` when the standard defines none."""
    try:
        return dtypes.result_type(*(a.dtype for a in arrays))
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None


def _operands(name: str, args: tuple[Any, ...]) -> list[Array | Scalar]:
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
    return [a.array() if isinstance(a, Scalar) else a for a in _operands(name, args)]


def scalar_array(value: bool | int | float | complex, dtype: DType, like: Array, name: str = "") -> Array:
    """A 0-D array of ``dtype`` on ``like``'s device; OverflowError (naming ``name``) for an int out of range."""
    return Scalar(value, dtype, like.device, name).array()


