"""The cumulative functions (scans along one axis), one ``Scan`` row each.

``include_initial`` needs no kernel: the front fills the result with the row's
identity and copies the scan in behind it with the memory primitives.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.axes import flag, normalize_axis
from rocm_array.dtypes import DType
from rocm_array.hookspecs import Impl

from rocm_array.docstrings import RowDoc, Routine
from rocm_array.namespace import by_name

from . import docs
from .backs import SCAN
from .front_reduction import accumulation_dtype, accumulator, check_array, check_category


@dataclass(frozen=True)
class Scan(Routine):
    """An inclusive scan: ``identity`` leads the result under ``include_initial``;
    ``combine`` is the functor of ``rocm_array_kernels/reduction`` the gpu back scans with;
    ``numpy`` the cpu back's function, called as ``numpy(a, axis=...)``.
    """

    name: str
    identity: int
    combine: str
    numpy: Callable[..., Any]
    doc: str = ""  # the one-line summary that opens the rendered docstring (``docs.scan_doc``)

    __doc__ = RowDoc(__doc__, docs.scan_doc)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return by_name, (self.name,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "__name__", self.name)
        # Introspection (inspect.signature, help) sees the call's parameters, without self.
        call = inspect.signature(type(self).__call__)
        object.__setattr__(self, "__signature__", call.replace(parameters=list(call.parameters.values())[1:]))

    def __call__(self, x: Array, /, *, axis: int | None = None, dtype: DType | None = None,
                 include_initial: bool = False) -> Array:
        name = self.name
        check_category(name, check_array(name, x), "any")  # bool counts (accumulation_dtype)
        flag(include_initial, name, "include_initial")
        if x.ndim == 0:
            raise ValueError(f"{name}() needs an array of at least one dimension")
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"{name}(): axis is required for a {x.ndim}-D array")
            axis = 0
        axis = normalize_axis(axis, x.ndim, name)
        out_dtype = accumulation_dtype(name, x.dtype, dtype)
        scanned = (SCAN[x.device.kind](self, x, axis, accumulator(out_dtype), out_dtype) if x.size
                   else memory.empty(x.shape, out_dtype, x.device))
        if not include_initial:
            return scanned
        shape = tuple(n + (i == axis) for i, n in enumerate(x.shape))
        out = memory.full(shape, self.identity, out_dtype, x.device)
        memory.copy_into(out._view(x.shape, out.strides, out.offset + out.strides[axis]), scanned)
        return out


SCANS = (
    Scan("cumulative_sum", 0, "ra_red::add_op", np.cumsum,
         doc="The running sum of the elements along an axis."),
    Scan("cumulative_prod", 1, "ra_red::mul_op", np.cumprod,
         doc="The running product of the elements along an axis."),
)

IMPLS = [Impl(s.name, s) for s in SCANS]
