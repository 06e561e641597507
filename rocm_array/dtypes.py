"""The data types, their categories and the promotion table.

These tables are the single source of truth for every plugin and every device:
type promotion is never delegated to NumPy (whose value-based and mixed-kind
rules differ from the standard's).
"""

from __future__ import annotations

import builtins
import functools
import math
import struct
from typing import Any, Final, cast

import ml_dtypes
import numpy as np
import numpy.typing as npt

__all__ = [
    "DType", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "compute_dtype",
    "ALL", "CATEGORIES", "result_type", "isdtype", "from_numpy", "check_dtype", "python_scalar",
]


class DType:
    """A data type. Instances are singletons: compare them with ``==`` or ``is``."""

    __slots__ = ("name", "itemsize", "kind", "numpy", "c_type", "type", "char", "str")

    def __init__(self, name: str, kind: str, numpy_dtype: npt.DTypeLike, c_type: str) -> None:
        self.name = name
        self.kind = kind  # "b", "i", "u", "f", "c": the kind letter NumPy uses too
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self.c_type = c_type  # the type's name in rocm_array_kernels/ (see rocm_array_kernels/common/types.h)
        # What engines written for NumPy read off a dtype (Dask, xarray, Zarr): NumPy's values.
        self.type = self.numpy.type
        self.char = self.numpy.char
        self.str = self.numpy.str

    #: NumPy's flag for dtypes holding Python objects (Dask's P2P rechunk reads it); none of ours does.
    hasobject = False

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype: ``np.dtype(xp.float32)`` reads it, so every NumPy dtype argument takes ours."""
        return self.numpy

    def __repr__(self) -> str:
        return f"rocm_array.{self.name}"

    __str__ = __repr__

    # Each dtype is one object, and pickling returns that same object (__reduce__). It also equals
    # its NumPy dtype and scalar type (``xp.float32 == np.float32``), as engines written for NumPy
    # compare them. Hashing stays object identity, at C speed (``object.__hash__`` fills the slot
    # directly): dtypes key the hot paths' dicts, where the identity check answers first.
    def __eq__(self, other: object) -> builtins.bool:
        if other is self or isinstance(other, DType):
            return other is self
        if isinstance(other, (np.dtype, type)):
            try:
                return builtins.bool(np.dtype(other) == self.numpy)
            except TypeError:
                return False
        return NotImplemented

    __hash__ = object.__hash__

    def __reduce__(self) -> str:
        return self.name


bool: Final = DType("bool", "b", np.bool_, "bool")  # noqa: A001 - the standard's name
int8: Final = DType("int8", "i", np.int8, "int8_t")
int16: Final = DType("int16", "i", np.int16, "int16_t")
int32: Final = DType("int32", "i", np.int32, "int32_t")
int64: Final = DType("int64", "i", np.int64, "int64_t")
uint8: Final = DType("uint8", "u", np.uint8, "uint8_t")
uint16: Final = DType("uint16", "u", np.uint16, "uint16_t")
uint32: Final = DType("uint32", "u", np.uint32, "uint32_t")
uint64: Final = DType("uint64", "u", np.uint64, "uint64_t")
float16: Final = DType("float16", "f", np.float16, "float16")
bfloat16: Final = DType("bfloat16", "f", ml_dtypes.bfloat16, "bfloat16")
float32: Final = DType("float32", "f", np.float32, "float")
float64: Final = DType("float64", "f", np.float64, "double")
complex64: Final = DType("complex64", "c", np.complex64, "complex64")
complex128: Final = DType("complex128", "c", np.complex128, "complex128")

ALL: Final[tuple[DType, ...]] = (
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)
BY_NAME: Final[dict[str, DType]] = {d.name: d for d in ALL}
_BY_NUMPY: Final[dict[np.dtype, DType]] = {d.numpy: d for d in ALL}

#: The real floating and integer dtypes in order (kernel instantiations follow it).
REAL_FLOATS: Final[tuple[DType, ...]] = (float16, bfloat16, float32, float64)
INTEGERS: Final[tuple[DType, ...]] = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)

_SIGNED = frozenset({int8, int16, int32, int64})
_UNSIGNED = frozenset({uint8, uint16, uint32, uint64})
_REAL_FLOAT = frozenset(REAL_FLOATS)
_COMPLEX = frozenset({complex64, complex128})

#: The standard's dtype kinds (``isdtype``) and the categories functions admit.
CATEGORIES: Final[dict[str, frozenset[DType]]] = {
    "bool": frozenset({bool}),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED | _UNSIGNED,
    "real floating": _REAL_FLOAT,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED | _UNSIGNED | _REAL_FLOAT | _COMPLEX,
    # Categories the specification uses for function arguments, beyond isdtype's kinds.
    "integer or boolean": _SIGNED | _UNSIGNED | {bool},
    "floating-point": _REAL_FLOAT | _COMPLEX,
    "real-valued": _SIGNED | _UNSIGNED | _REAL_FLOAT,
    "any": frozenset(ALL),
}

# The defaults of the standard's default_dtypes().
DEFAULT_FLOAT: Final = float64
DEFAULT_COMPLEX: Final = complex128
DEFAULT_INT: Final = int64
DEFAULT_INDEX: Final = int64


def _lattice() -> dict[tuple[DType, DType], DType]:
    """The standard's promotion lattice, plus float16/bfloat16 and int/float mixing.

    Beyond the standard: bfloat16 with float16 gives float32 (neither holds the
    other), and an integer with a floating dtype gives that floating dtype, as
    PyTorch and JAX do. bool with a number, and uint64 with a signed integer,
    stay errors: no dtype holds both.
    """
    table: dict[tuple[DType, DType], DType] = {}

    def join(chain: list[DType]) -> None:
        for i, a in enumerate(chain):
            for b in chain[i:]:
                table[a, b] = table[b, a] = b

    table[bool, bool] = bool
    join([int8, int16, int32, int64])
    join([uint8, uint16, uint32, uint64])
    for u, i in ((uint8, int16), (uint16, int32), (uint32, int64)):
        for s in (int8, int16, int32, int64):
            wide = max(i, s, key=lambda d: d.itemsize)
            table[u, s] = table[s, u] = wide
    join([float16, float32, float64])
    join([bfloat16, float32, float64])
    table[float16, bfloat16] = table[bfloat16, float16] = float32
    join([complex64, complex128])
    for f in _REAL_FLOAT:
        c = complex128 if f is float64 else complex64
        for z in _COMPLEX:
            table[f, z] = table[z, f] = max(c, z, key=lambda d: d.itemsize)
    for n in _SIGNED | _UNSIGNED:
        for f in _REAL_FLOAT | _COMPLEX:
            table[n, f] = table[f, n] = f
    return table


PROMOTION: Final[dict[tuple[DType, DType], DType]] = _lattice()


def promote(a: DType, b: DType) -> DType:
    """The result dtype of two array dtypes; TypeError when the standard defines none."""
    try:
        return PROMOTION[a, b]
    except KeyError:
        raise TypeError(f"{a.name} and {b.name} cannot be promoted to a common dtype") from None


def result_type(*dtypes: DType) -> DType:
    """Promote any number of dtypes (at least one)."""
    if not dtypes:
        raise ValueError("at least one dtype is required")
    out = check_dtype(dtypes[0])
    for d in dtypes[1:]:
        out = promote(out, check_dtype(d))
    return out


def scalar_dtype(value: object, like: DType) -> DType:
    """The dtype a Python scalar takes beside an array of dtype ``like`` (the standard's rules).

    A bool goes with a bool array, an int with a numeric one, a float with a
    floating one, a complex with a floating one (a real array then gives its
    complex counterpart). Where the standard leaves the mix open, a float or complex
    beside an integer array takes the default floating or complex dtype, as in NumPy
    and CuPy. TypeError for the mixes with bool; the caller checks integer bounds.
    """
    if isinstance(value, _pybool):
        ok = like is bool
    elif isinstance(value, int):
        ok = like.kind in "iufc"
    elif isinstance(value, float):
        if like.kind in "iu":
            return DEFAULT_FLOAT
        ok = like.kind in "fc"
    elif isinstance(value, complex):
        if like.kind in "iu":
            return DEFAULT_COMPLEX
        if like.kind == "f":
            return complex128 if like is float64 else complex64
        ok = like.kind == "c"
    else:
        raise TypeError(f"expected an array or a Python scalar, got {type(value).__name__}")
    if not ok:
        raise TypeError(f"a Python {type(value).__name__} cannot be combined with a {like.name} array")
    return like


_pybool = type(True)
#: The Python scalar types that mix with arrays (by ``scalar_dtype``'s rules); NumPy also takes them as dtypes.
SCALARS: Final = (_pybool, int, float, complex)


def isdtype(dtype: DType, kind: DType | str | tuple[DType | str, ...]) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``.

    Parameters
    ----------
    dtype : DType
        The dtype tested (a NumPy dtype or scalar type names ours).
    kind : DType, str or tuple
        A dtype; a kind name: 'bool', 'signed integer', 'unsigned integer', 'integral', 'real
        floating', 'complex floating', 'numeric'; or a tuple of these (any matches).

    Returns
    -------
    bool
        Whether it matches.

    Raises
    ------
    TypeError
        A dtype or kind that is neither.
    ValueError
        An unknown kind name.

    Notes
    -----
    Pure dtype arithmetic on the host, from the one table of categories
    (``rocm_array.dtypes.CATEGORIES``).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.isdtype(xp.float32, 'real floating'), xp.isdtype(xp.int8, ('bool', 'unsigned integer'))
    (True, False)
    """
    dtype = check_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype in CATEGORIES[kind]
    try:
        return dtype is check_dtype(kind)
    except TypeError:
        raise TypeError(f"kind must be a dtype, a kind name or a tuple of them, not {type(kind).__name__}") from None


_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric")


def check_dtype(dtype: object, name: str = "") -> DType:
    """Our dtype for ``dtype``: one of ours, or a NumPy dtype or scalar type (``np.dtype("int8")``,
    ``np.float32``, ``float``) that has a counterpart; TypeError otherwise (names such as
    ``"float32"`` too, as the standard's dtype arguments are dtype objects), naming the function
    ``name`` when given."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, (np.generic, *SCALARS))):
        found = _BY_NUMPY.get(np.dtype(dtype))
        if found is not None:
            return found
    who = f"{name}(): " if name else ""
    if isinstance(dtype, str) and dtype in BY_NAME:
        raise TypeError(f"{who}dtype must be a dtype object, not the name {dtype!r}: use xp.{dtype} "
                        f"(the standard's dtype arguments are dtype objects)")
    shown = dtype.__name__ if isinstance(dtype, type) else repr(dtype)
    raise TypeError(f"{who}{shown} is no rocm_array dtype: use one of rocm_array's dtypes (xp.float32, xp.int64…) "
                    f"or a NumPy dtype that has one")


def python_scalar(value: Any) -> Any:
    """The Python scalar of a NumPy scalar (``np.float32(2)`` -> 2.0), which then mixes with arrays
    as Python scalars do; any other value as it is."""
    if isinstance(value, np.generic):
        if value.dtype.kind in "biufc":
            return value.item()
        if value.dtype == bfloat16.numpy:
            return float(value)
    return value


def from_numpy(dtype: np.dtype) -> DType:
    """Our dtype for a NumPy dtype; TypeError for dtypes we do not have (strings, objects…)."""
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"NumPy dtype {dtype} has no rocm_array counterpart") from None


@functools.cache  # asked per Python int operand
def int_bounds(dtype: DType) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype."""
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def compute_dtype(dtype: DType) -> DType:
    """The dtype arithmetic on ``dtype`` is carried out in, rounding once to the result.

    float16 and bfloat16 compute in float32: every value of either is exact in it, a float16
    sum of 2048 ones is already wrong, and NumPy has few bfloat16 loops. Every other dtype
    computes in itself. The one rule for every plugin and device.
    """
    return float32 if dtype is float16 or dtype is bfloat16 else dtype


def real_of(dtype: DType) -> DType:
    """The real floating dtype of a floating dtype's precision (a real one is its own)."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def complex_of(dtype: DType) -> DType:
    """The complex dtype of a floating dtype's precision; float16 and bfloat16 go to complex64."""
    return complex128 if dtype is float64 else complex64 if dtype.kind == "f" else dtype


def host_cast(a: np.ndarray, dtype: DType) -> np.ndarray:
    """``a`` ready to be cast to ``dtype`` by NumPy with one rounding, as a GPU's cast rounds.
    ml_dtypes casts values wider than float32 to bfloat16 through float32, rounding twice (1 + 2**-8
    + 2**-40 became 1, not 1 + 2**-7): those go to float32 rounded to odd (toward zero, then an
    inexact result made odd), which keeps the second rounding right (24 bits against 8)."""
    if dtype is not bfloat16:
        return a
    if not (a.dtype.kind in "fc" and a.dtype.itemsize > (4 if a.dtype.kind == "f" else 8)
            or a.dtype.kind in "iu" and a.dtype.itemsize >= 4):
        return a
    if a.ndim == 0:  # (a kernel's scalar argument: the same in Python, a tenth of NumPy's time)
        return np.asarray(_odd_float32(float(a.real if a.dtype.kind == "c" else a)))
    with np.errstate(all="ignore"):
        x = (a.real if a.dtype.kind == "c" else a).astype(np.float64)
        r = x.astype(np.float32)
        r = np.where(np.abs(r.astype(np.float64)) > np.abs(x), np.nextafter(r, np.float32(0)), r)
        inexact = (r.astype(np.float64) != x).astype(np.uint32)
    return cast("np.ndarray", (r.view(np.uint32) | inexact).view(np.float32))


_F32_MAX = float(np.finfo(np.float32).max)


def _odd_float32(x: float) -> np.float32:
    """``x`` rounded to float32 toward zero, made odd where inexact (host_cast's rule, for one value)."""
    if x != x or abs(x) == math.inf:
        return np.float32(x)
    if abs(x) > _F32_MAX:  # (its bits are odd; bfloat16 rounds it to inf, as x)
        return np.float32(math.copysign(_F32_MAX, x))
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if abs(struct.unpack("<f", struct.pack("<I", bits))[0]) > abs(x):
        bits -= 1  # (toward zero: one step down in magnitude, the sign bit apart)
    if struct.unpack("<f", struct.pack("<I", bits))[0] != x:
        bits |= 1
    return np.uint32(bits).view(np.float32)
