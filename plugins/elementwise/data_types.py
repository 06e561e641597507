"""The data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes

from rocm_array import devices, dtypes, memory
from rocm_array.array import Array
from rocm_array.dtypes import DType
from rocm_array.hookspecs import Impl

from .ufunc import SCALARS

def astype(x: Array, dtype: DType, /, *, copy: bool = True, device: Any = None) -> Array:
    """``x`` cast to ``dtype`` (on ``device`` when given); complex to real-valued is a TypeError."""
    if not isinstance(x, Array):
        raise TypeError(f"astype() expected an array, got {type(x).__name__}")
    dtype = dtypes.check_dtype(dtype)
    if x.dtype.kind == "c" and dtype.kind not in "cb":
        raise TypeError(f"astype() cannot cast {x.dtype.name} to {dtype.name}: take real() or imag() first")
    dev = x.device if device is None else devices.parse(device)
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
    """Whether promotion of ``from_`` with ``to`` gives ``to``."""
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
    """Limits of a floating dtype; for a complex dtype, those of its real components."""
    d = _dtype_of(type, "finfo")
    d = dtypes.real_of(d)
    if d.kind != "f":
        raise TypeError(f"finfo() needs a floating-point dtype, got {d.name}")
    info = ml_dtypes.finfo(d.numpy)  # covers NumPy's float types and bfloat16
    return finfo_object(bits=int(info.bits), eps=float(info.eps), max=float(info.max), min=float(info.min),
                        smallest_normal=float(info.smallest_normal), dtype=d)


def iinfo(type: DType | Array, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Limits of an integer dtype."""
    d = _dtype_of(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo() needs an integer dtype, got {d.name}")
    lo, hi = dtypes.int_bounds(d)
    return iinfo_object(bits=d.itemsize * 8, max=hi, min=lo, dtype=d)


def result_type(*arrays_and_dtypes: Array | DType | bool | int | float | complex) -> DType:
    """Promote arrays and dtypes, then apply Python scalars as they would meet an array of that dtype."""
    typed = [a for a in arrays_and_dtypes if not isinstance(a, SCALARS)]
    if not typed:
        raise ValueError("result_type() needs at least one array or dtype")
    out = dtypes.result_type(*(_dtype_of(a, "result_type") for a in typed))
    for s in arrays_and_dtypes:
        if isinstance(s, SCALARS):
            out = dtypes.scalar_dtype(s, out)
    return out


IMPLS: list[Impl] = [
    Impl("astype", astype), Impl("can_cast", can_cast), Impl("finfo", finfo), Impl("iinfo", iinfo),
    Impl("isdtype", dtypes.isdtype), Impl("result_type", result_type),
]
