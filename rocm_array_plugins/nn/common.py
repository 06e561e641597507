"""What the nn fronts share: argument checks, the dtype rule, layout helpers, the vendor switch."""

from __future__ import annotations

import os
from typing import Sequence

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.axes import integer
from rocm_array.devices import check_same
from rocm_array.dtypes import CATEGORIES, DType

__all__ = ["VENDOR_VAR", "vendor_enabled", "arrays", "floating", "ints"]

#: ``ROCM_ARRAY_NN_VENDOR=0`` makes the gpu backs use the project's own kernels even where
#: cuDNN or MIOpen is present (the tests run both paths this way).
VENDOR_VAR = "ROCM_ARRAY_NN_VENDOR"


def vendor_enabled() -> bool:
    """Whether the gpu backs may call the vendor library (read at each call, so tests can switch it)."""
    return os.environ.get(VENDOR_VAR, "1") != "0"


def arrays(name: str, **named: object) -> None:
    """TypeError naming the first of ``named`` that is not an Array; ValueError if they span devices."""
    for what, x in named.items():
        if not isinstance(x, Array):
            raise TypeError(f"nn.{name}(): {what} must be an array, not {type(x).__name__}")
    check_same(*named.values())


def floating(name: str, optional: tuple[str, ...] = (), **named: Array | None) -> DType:
    """The promoted dtype of the given arrays (None skipped for the ``optional`` names), each of
    which must have a real floating dtype (an integer input is a TypeError, not promoted to the
    floating one)."""
    arrays(name, **{k: v for k, v in named.items() if v is not None or k not in optional})
    given = {k: v for k, v in named.items() if v is not None}  # (arrays: a None left is optional)
    if any(x.dtype not in CATEGORIES["real floating"] for x in given.values()):
        raise TypeError(f"nn.{name}() needs real floating arrays, got "
                        + ", ".join(f"{k} of {v.dtype.name}" for k, v in given.items()))
    return dtypes.result_type(*(x.dtype for x in given.values()))


#: The largest stride, padding, size... nn takes: the kernels' 32-bit geometry (and far past any
#: image; NumPy's windows on cpu overflowed on larger ones).
MAX_EXTENT = 2**31 - 1


def ints(value: int | Sequence[int], n: int, name: str, what: str, minimum: int) -> tuple[int, ...]:
    """``value`` (one int for every axis, or ``n`` of them) as a tuple, each at least ``minimum``
    and at most MAX_EXTENT."""
    seq = list(value) if isinstance(value, (tuple, list)) else [value] * n
    if len(seq) != n:
        raise ValueError(f"nn.{name}(): {what} needs {n} value(s), got {len(seq)}")
    out = tuple(integer(v, f"nn.{name}", what) for v in seq)
    if any(v < minimum for v in out):
        raise ValueError(f"nn.{name}(): {what} must be at least {minimum}, got {value}")
    if any(v > MAX_EXTENT for v in out):
        raise ValueError(f"nn.{name}(): {what} must be at most {MAX_EXTENT}, got {value}")
    return out
