"""The shared call path of the reductions: one ``Reduction`` object per function (rows in table.py).

The front is the same on every device: argument kinds, dtype category, axes,
keepdims, the result and accumulation dtypes, and empty reductions (answered
here with the row's identity, so a back only ever sees work to do). The back
is chosen by the device kind: ``cpu`` calls the row's NumPy function, ``gpu``
launches the reduction kernel with the row's map / combine / finalize functors.
"""

from __future__ import annotations

import difflib
import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, cast

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.axes import flag, normalize_axes, normalize_axis
from rocm_array.dtypes import CATEGORIES, DType

from rocm_array.docstrings import RowDoc, Routine
from rocm_array.namespace import by_name

from . import docs
from .backs import REDUCE

# The spec's "unsigned integer data type having the same number of bits as the default integer".
_DEFAULT_UINT = next(d for d in CATEGORIES["unsigned integer"] if d.itemsize == dtypes.DEFAULT_INT.itemsize)


def check_array(name: str, x: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}() expects an array, got {type(x).__name__}")
    return x


def check_category(name: str, x: Array, category: str) -> None:
    if x.dtype not in CATEGORIES[category]:
        raise TypeError(f"{name}() does not accept {x.dtype.name} input; it needs a {category} dtype")


def accumulation_dtype(name: str, dtype: DType, requested: Any) -> DType:
    """The result dtype of sum, prod and the cumulative functions (the spec's ``dtype=`` rule).

    ``requested`` when given; otherwise bool and integers narrower than the default integer
    widen to it (unsigned ones to the unsigned integer of its width), others keep ``dtype``.
    (bool counts, as in NumPy, CuPy and PyTorch: the standard leaves bool input open.)
    """
    if requested is not None:
        want = dtypes.check_dtype(requested, name)
        if want not in CATEGORIES["numeric"]:
            raise TypeError(f"{name}(): dtype must be a numeric dtype, not {want.name}")
        if dtype.kind == "c" and want.kind != "c":
            raise TypeError(f"{name}(): dtype {want.name} would discard the imaginary part of {dtype.name}")
        return want
    default = {"b": dtypes.DEFAULT_INT, "i": dtypes.DEFAULT_INT, "u": _DEFAULT_UINT}.get(dtype.kind)
    return default if default is not None and dtype.itemsize < default.itemsize else dtype


def accumulator(dtype: DType) -> DType:
    """The dtype a reduction to ``dtype`` combines in (``dtypes.compute_dtype``)."""
    return dtypes.compute_dtype(dtype)


def _correction(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}(): correction must be a real number, not {type(value).__name__}")
    return float(value)


def float_result(name: str, dtype: DType, requested: Any) -> DType:
    """mean, var, std: an integer input gives the default real floating dtype (spec notes); a
    ``dtype=`` (mean's, as NumPy's and CuPy's: Cubed passes one) must be a floating dtype."""
    if requested is not None:
        want = dtypes.check_dtype(requested, name)
        if want not in CATEGORIES["floating-point"] or (dtype.kind == "c" and want.kind != "c"):
            raise TypeError(f"{name}(): dtype must be a floating dtype that holds {dtype.name}, not {want.name}")
        return want
    return dtypes.DEFAULT_FLOAT if dtype.kind in "iu" else dtype


#: How a row's result dtype follows from the input dtype and its ``dtype=`` argument.
RESULT_RULES: dict[str, Callable[[str, DType, Any], DType]] = {
    "accumulate": accumulation_dtype,
    "same": lambda name, d, _: d,
    "float": float_result,
    "bool": lambda name, d, _: dtypes.bool,
    "index": lambda name, d, _: dtypes.DEFAULT_INDEX,
}

#: The keyword arguments beyond axis and keepdims a row may take, with their defaults.
OPTIONS: dict[str, Any] = {"dtype": None, "correction": 0.0}
#: Their annotations in the rows' signatures (inspect.signature, and the stub from it).
_OPTION_TYPES = {"dtype": "DType | None", "correction": "int | float"}


@dataclass(frozen=True)
class Reduction(Routine):
    """A reduction: one row of ``table.py``, called as the public function.

    ``category`` names the admitted dtypes (a key of ``dtypes.CATEGORIES``);
    ``result`` a key of ``RESULT_RULES``; ``accumulate`` casts the input to the
    result dtype (widened by ``accumulator``) before combining; ``identity`` is
    an empty reduction's value (None: empty is a ValueError); ``map``,
    ``combine`` and ``finalize`` are the gpu kernel's functor slots
    (``rocm_array_kernels/reduction``); ``numpy`` the cpu back's function, called as
    ``numpy(a, axis=..., keepdims=..., **options)``; ``axis`` is ``"many"``
    (None, an int or a tuple) or ``"one"`` (None or an int); ``options`` the
    extra keyword arguments (names in ``OPTIONS``).
    """

    name: str
    category: str
    result: str
    identity: Any
    map: str
    combine: str
    finalize: str
    numpy: Callable[..., Any]
    accumulate: bool = False
    axis: str = "many"
    options: tuple[str, ...] = ()
    doc: str = ""  # the one-line summary that opens the rendered docstring (``docs.reduction_doc``)

    __doc__ = RowDoc(__doc__, docs.reduction_doc)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return by_name, (self.name,)

    def __post_init__(self) -> None:
        # Introspection (inspect.signature, help) sees the standard's signature.
        object.__setattr__(self, "__name__", self.name)
        object.__setattr__(self, "__signature__", self._signature())

    def _signature(self) -> inspect.Signature:
        kw = inspect.Parameter.KEYWORD_ONLY
        axis = "int | None" if self.axis == "one" else "int | tuple[int, ...] | None"
        params = [inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY, annotation="Array"),
                  inspect.Parameter("axis", kw, default=None, annotation=axis)]
        params += [inspect.Parameter(o, kw, default=OPTIONS[o], annotation=_OPTION_TYPES[o]) for o in self.options]
        params.append(inspect.Parameter("keepdims", kw, default=False, annotation="bool"))
        return inspect.Signature(params, return_annotation="Array")

    def __call__(self, x: Array, /, *, axis: Any = None, keepdims: bool = False, **options: Any) -> Array:
        name = self.name
        unknown = options.keys() - set(self.options)
        if unknown:
            known = [*self.options, "axis", "keepdims"]
            close = [f"{u} (did you mean {m[0]}?)" if (m := difflib.get_close_matches(u, known, 1)) else u
                     for u in sorted(unknown)]
            raise TypeError(f"{name}() got unexpected keyword argument(s) {', '.join(close)}; "
                            f"it takes {', '.join(known)}")
        check_category(name, check_array(name, x), self.category)
        if self.axis == "one" and axis is not None:
            axes: tuple[int, ...] = (normalize_axis(axis, x.ndim, name),)
        else:
            axes = normalize_axes(axis, x.ndim, name)
        flag(keepdims, name, "keepdims")
        out_dtype = RESULT_RULES[self.result](name, x.dtype, options.pop("dtype", None))
        if "correction" in self.options:
            options["correction"] = _correction(name, options.get("correction", OPTIONS["correction"]))
        shape = reduced_shape(x.shape, axes, keepdims)
        # Nothing to combine: no elements, or (var, std) no more than `correction` of them.
        if math.prod(x.shape[i] for i in axes) <= options.get("correction", 0):
            if self.identity is None:
                raise ValueError(f"{name}() of an empty array (or along a zero-size axis) is undefined")
            return memory.full(shape, _identity(self.identity, out_dtype), out_dtype, x.device)
        if math.prod(shape) == 0:
            return memory.empty(shape, out_dtype, x.device)
        compute = accumulator(out_dtype) if self.accumulate else x.dtype
        return cast("Array", REDUCE[x.device.kind](self, x, axes, keepdims, compute, out_dtype, options))


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """The shape left by reducing ``axes``: dropped, or kept with size 1 under ``keepdims``."""
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _identity(value: Any, dtype: DType) -> Any:
    """A complex identity (mean's NaN + NaN j) is a real one for real dtypes."""
    return value.real if isinstance(value, complex) and dtype.kind != "c" else value


