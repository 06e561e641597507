"""The data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes

from rocm_array import devices, dtypes, memory
from rocm_array.array import Array
from rocm_array.dtypes import SCALARS, DType
from rocm_array.axes import flag
from rocm_array.docstrings import parameters
from rocm_array.hookspecs import Impl


@parameters(device="x's device")
def astype(x: Array, dtype: DType, /, *, copy: bool = True, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` (and moved to ``device``).

    Parameters
    ----------
    x : Array
        The input array.
    dtype : DType
        The target dtype (a NumPy dtype or scalar type names ours).
    copy : bool, optional
        False returns ``x`` itself when dtype and device already match. Default: True.
    {device}

    Returns
    -------
    Array
        ``x``'s values in ``dtype``, converted as NumPy's ``astype`` does (C casts; NaN to int is
        unspecified).

    Raises
    ------
    TypeError
        ``x`` not an array, a dtype that is not one, or complex to a real dtype (which would drop
        the imaginary part: use real or abs first).
    ValueError
        A device that does not exist.

    Notes
    -----
    Devices: one cast-copy kernel on a GPU (``rocm_array_kernels/copy``), NumPy on ``cpu``.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.astype(xp.asarray([1.7, -2.5], device="cpu"), xp.int32)
    Array([ 1, -2], dtype=int32, device=cpu)
    """
    if not isinstance(x, Array):
        raise TypeError(f"astype() expected an array, got {type(x).__name__}")
    dtype = dtypes.check_dtype(dtype, "astype")
    if x.dtype.kind == "c" and dtype.kind not in "cb":
        raise TypeError(f"astype() cannot cast {x.dtype.name} to {dtype.name}: take real() or imag() first")
    copy = flag(copy, "astype", "copy")
    dev = x.device if device is None else devices.parse(device, "astype")
    if dtype == x.dtype and dev == x.device and not copy:
        return x
    if dev != x.device:
        x = x.to_device(dev)  # a new array already: cast it only when the dtype differs
        if dtype == x.dtype:
            return x
    return memory.copy(x, dtype)


def _dtype_of(arg: DType | Array, fn: str) -> DType:
    if isinstance(arg, Array):
        return arg.dtype
    try:
        return dtypes.check_dtype(arg)  # ours, or a NumPy dtype that names one
    except TypeError:
        raise TypeError(f"{fn}() expected a dtype or an array, got {type(arg).__name__}") from None


def can_cast(from_: DType | Array, to: DType, /) -> bool:
    """Whether ``from_`` converts to ``to`` by the promotion rules (without losing values by kind).

    Parameters
    ----------
    from_ : DType or Array
        The source dtype, or an array of it.
    to : DType
        The target dtype.

    Returns
    -------
    bool
        True where the promotion lattice joins ``from_`` and ``to`` at ``to``.

    Raises
    ------
    TypeError
        Arguments that are not dtypes or arrays.

    Notes
    -----
    Pure dtype arithmetic on the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.can_cast(xp.int8, xp.int32), xp.can_cast(xp.float64, xp.float32)
    (True, False)
    """
    frm = _dtype_of(from_, "can_cast")
    return dtypes.PROMOTION.get((frm, dtypes.check_dtype(to))) == to


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - the standard's name
    bits: int
    max: int
    min: int
    dtype: DType


def finfo(type: DType | Array, /) -> finfo_object:  # noqa: A002 - the standard's name
    """Machine limits of a floating dtype.

    Parameters
    ----------
    type : DType or Array
        A floating dtype, or an array of one.

    Returns
    -------
    finfo_object
        ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` and ``dtype``; complex dtypes give
        their real counterpart's limits.

    Raises
    ------
    TypeError
        A dtype that is not floating.

    Notes
    -----
    Pure dtype arithmetic on the host (bfloat16 through ml_dtypes).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.finfo(xp.float32).eps
    1.1920928955078125e-07
    """
    d = _dtype_of(type, "finfo")
    d = dtypes.real_of(d)
    if d.kind != "f":
        raise TypeError(f"finfo() needs a floating-point dtype, got {d.name}")
    info = ml_dtypes.finfo(d.numpy)  # type: ignore[no-untyped-call]  # (ml_dtypes has no types); covers bfloat16
    return finfo_object(bits=int(info.bits), eps=float(info.eps), max=float(info.max), min=float(info.min),
                        smallest_normal=float(info.smallest_normal), dtype=d)


def iinfo(type: DType | Array, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Machine limits of an integer dtype.

    Parameters
    ----------
    type : DType or Array
        An integer dtype, or an array of one.

    Returns
    -------
    iinfo_object
        ``bits``, ``max``, ``min`` and ``dtype``.

    Raises
    ------
    TypeError
        A dtype that is not integer.

    Notes
    -----
    Pure dtype arithmetic on the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.iinfo(xp.int8).min, xp.iinfo(xp.uint16).max
    (-128, 65535)
    """
    d = _dtype_of(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo() needs an integer dtype, got {d.name}")
    lo, hi = dtypes.int_bounds(d)
    return iinfo_object(bits=d.itemsize * 8, max=hi, min=lo, dtype=d)


def result_type(*arrays_and_dtypes: Array | DType | bool | int | float | complex) -> DType:
    """The dtype the standard's promotion gives ``arrays_and_dtypes``.

    Parameters
    ----------
    *arrays_and_dtypes : Array, DType or Python scalar
        At least one array or dtype; Python scalars take the dtype the standard gives them beside it
        (a float beside integers: float64).

    Returns
    -------
    DType
        The promoted dtype.

    Raises
    ------
    TypeError
        No array or dtype, or dtypes without a promoted dtype (bool with a number, uint64 with a
        signed integer).
    ValueError
        No arguments.

    Notes
    -----
    One promotion lattice for every device (``rocm_array.dtypes``), never NumPy's value-based rules.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.result_type(xp.int8, xp.uint8), xp.result_type(xp.float16, xp.bfloat16)
    (rocm_array.int16, rocm_array.float32)
    """
    typed = [a for a in arrays_and_dtypes if not isinstance(a, SCALARS)]
    if not arrays_and_dtypes:
        raise ValueError("result_type() needs at least one array or dtype")
    if not typed:  # a TypeError, as for any argument without a dtype: xarray skips those by it
        raise TypeError("result_type() needs at least one array or dtype beside Python scalars, which have none")
    kinds = [_dtype_of(a, "result_type") for a in typed]
    try:  # (the promotion rules' messages name no function)
        out = dtypes.result_type(*kinds)
        for s in arrays_and_dtypes:
            if isinstance(s, SCALARS):
                out = dtypes.scalar_dtype(s, out)
    except TypeError as e:
        raise TypeError(f"result_type(): {e}") from None
    return out


IMPLS: list[Impl] = [
    Impl("astype", astype), Impl("can_cast", can_cast), Impl("finfo", finfo), Impl("iinfo", iinfo),
    Impl("isdtype", dtypes.isdtype), Impl("result_type", result_type),
]
