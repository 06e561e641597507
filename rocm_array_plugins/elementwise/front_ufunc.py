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

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.broadcast import broadcast_shapes
from rocm_array.devices import check_same
from rocm_array.dtypes import CATEGORIES, SCALARS, DType

from rocm_array.docstrings import RowDoc, Routine
from rocm_array.namespace import by_name
from rocm_array.operands import Scalar, promote, scalar_operands
from rocm_array.runtime.layout import ROW_MAJOR

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


@dataclass(frozen=True)
class Ufunc(Routine):
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
        # (device runtime, operand kinds) -> the back's lane for them, or None (see ``_dispatch``)
        _lanes: ClassVar[dict[tuple[Any, ...] | None, Callable[..., Array] | None]]
        # [the lane the last call took, or ``_dispatch``]: what the next call tries first (``__call__``)
        hot: ClassVar[list[Callable[..., Array]]]

    __doc__ = RowDoc(__doc__, docs.ufunc_doc)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return by_name, (self.name,)

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES or self.result not in RESULT_RULES:
            raise ValueError(f"row {self.name!r}: unknown category or result rule")
        # Not fields: dataclasses.asdict (array-api-tests' reporting calls it on the rows it is
        # given as parameters) deep-copies every field, and runtimes do not copy.
        object.__setattr__(self, "_lanes", {})
        object.__setattr__(self, "hot", [self._dispatch])

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
            arrays: list[Array | Scalar] = [a0]  # the common cases, without scalar_operands' checks
            key: tuple[DType, ...] = (a0._dtype,)
            shape = a0._shape
        elif type(a0) is Array and type(args[1]) is Array and args[1]._device is a0._device:
            a1 = args[1]
            arrays = [a0, a1]
            key = (a0._dtype, a1._dtype)
            if a0._shape == a1._shape:
                shape = a0._shape
        else:
            arrays = scalar_operands(self.name, args)
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
        """The row's function. It tries the lane the last call took first (``hot``: an inline cache,
        as a JIT keeps at a call site), which the Array operators call in its place
        (``rocm_array.array._operator``): a lane checks in line that its operands are of the kinds
        it was made for, and hands any others to ``_dispatch``. A loop's calls are of one kind: the
        check is a few comparisons, and finding the lane (``_lane_key`` and a lookup) cost about 1,900
        instructions more, of an ``a + b``'s 23,000 then (tests/test_host_budget.py)."""
        if kwargs:  # (NumPy habits: out=, dtype=; about 17 ns a call to say so by name)
            raise TypeError(f"{self.name}() takes no keyword arguments, got {', '.join(kwargs)}" + "".join(
                hint.format(self.name) for word, hint in _KEYWORD_HINTS.items() if word in kwargs))
        # (a lane takes the row's arity of operands; the front says what is wrong with others)
        return (self.hot[0] if len(args) == self.arity else self._dispatch)(*args)

    def _dispatch(self, *args: Any) -> Array:
        """The call through the lane for the operands' kinds, which the next call then tries first;
        through the front when there is none (see ``_lane_key``). A lane hands here only operands
        it was not made for: their key is another lane's, so the call never comes back to it."""
        key = _lane_key(args, self.arity, self.scalar_check is None)
        lane = self._lanes.get(key)
        if lane is None:
            return self._general(args, key)
        self.hot[0] = lane
        return lane(*args)

    def _general(self, args: tuple[Any, ...], key: tuple[Any, ...] | None) -> Array:
        """The call through the front, whose operands took no lane (``key``: their lane's key, or None)."""
        arrays, dtype, out_dtype, shape = self._front(args)
        if key is not None and key not in self._lanes:
            self._make_lane(key, arrays[0]._device, dtype, out_dtype)
        return cast("Array", UFUNC[arrays[0]._device.kind](self, arrays, dtype, out_dtype, shape))

    def _make_lane(self, key: tuple[Any, ...], device: Any, dtype: DType, out_dtype: DType) -> None:
        """Resolve the back's lane for the operand kinds of ``key`` (None: the back has none)."""
        make = LANES.get(device.kind)
        self._lanes[key] = make and make(self, device, key[1:], dtype, out_dtype)

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


@dataclass(frozen=True)
class ParamUfunc(Ufunc):
    """A unary row whose functor also takes real parameters (``params`` names them: one or two),
    given after x: elu's alpha, affine's scale and shift, powf's exponent.

    A parameter is no operand: it takes no dtype of its own and promotes nothing, and it reaches
    the functor in the compute dtype (float32 for the 16-bit floats: as torch's activations take
    theirs), where a Python scalar operand would be rounded to x's dtype first. The kernels take
    it as a double, a fused expression in the compute dtype; no kernel is compiled per value.
    """

    params: tuple[str, ...] = ()
    if TYPE_CHECKING:  # (per instance, set by __post_init__)
        # [the lane the last call took, or ``_with_params``]: what the next call tries first
        last: ClassVar[list[Callable[[Any, tuple[float, ...]], Array]]]

    __doc__ = RowDoc(__doc__, docs.ufunc_doc)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.arity != 1 or not 1 <= len(self.params) <= 2 or not self.widen_half:
            raise ValueError(f"row {self.name!r}: one operand, one or two parameters, computed widened")
        # ``hot`` takes the function's operands (``array._operator``): its own call. ``last`` is its
        # lanes' inline cache, as ``hot`` is a Ufunc's: a lane takes x and the parameters' tuple.
        object.__setattr__(self, "hot", [self.__call__])
        object.__setattr__(self, "last", [self._with_params])

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY, annotation=a)
                                  for n, a in (("x", "Array"), *((p, "float") for p in self.params))],
                                 return_annotation="Array")

    def __call__(self, *args: Any, **kwargs: Any) -> Array:
        """The row's function: the lane the last call took first (``last``), as ``Ufunc.__call__``
        does. Found each call (``_lane_key`` and a lookup), an eager ``elu(a, 0.5)`` of 16 float32 took
        24,681 instructions over a recording driver, 21,819 so (``.diag/cg.sh``, as test_host_budget counts)."""
        if kwargs or len(args) != 1 + len(self.params):
            raise TypeError(f"{self.name}() takes x and {' and '.join(self.params)}, positionally")
        # (real numbers: the nn fronts check them)
        return self.last[0](args[0], tuple([float(p) for p in args[1:]]))

    def _with_params(self, x: Any, params: tuple[float, ...]) -> Array:
        """``_dispatch`` with the parameters: the call through the lane for x's kind, which the next
        call then tries first; through the front when there is none. A lane hands here any x it was
        not made for (its ``dispatch``)."""
        key = _lane_key((x,), 1)
        lane = self._lanes.get(key)
        if lane is not None:
            self.last[0] = lane
            return lane(x, params)
        arrays, dtype, out_dtype, shape = self._front((x,))
        if key is not None and key not in self._lanes:
            self._make_lane(key, arrays[0]._device, dtype, out_dtype)
        return cast("Array", UFUNC[arrays[0]._device.kind](self, arrays, dtype, out_dtype, shape, params=params))

    def into(self, out: Array, *args: Any) -> Array:
        raise TypeError(f"{self.name}() has no in-place form")


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
        if type(a0) is Array and a0._strides == ROW_MAJOR[a0._shape]:
            return (a0._device._runtime, a0._dtype)
        return None
    a1 = args[1]
    if type(a0) is Array:
        if a0._strides != ROW_MAJOR[a0._shape]:
            return None
        if type(a1) is Array:
            if a1._device is a0._device and a1._shape == a0._shape and a1._strides == a0._strides:
                return (a0._device._runtime, a0._dtype, a1._dtype)
            return None
        return (a0._device._runtime, a0._dtype, type(a1)) if scalars and type(a1) in SCALARS else None
    if scalars and type(a1) is Array and type(a0) in SCALARS and a1._strides == ROW_MAJOR[a1._shape]:
        return (a1._device._runtime, type(a0), a1._dtype)
    return None
