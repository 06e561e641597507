"""The cpu backs of the elementwise plugin: NumPy does the arithmetic.

The front has already chosen every dtype; these functions cast NumPy's
results to it, so NumPy's own promotion never leaks out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.devices import Device
from rocm_array.dtypes import DType

if TYPE_CHECKING:
    from .ufunc import Ufunc

# NumPy has few bfloat16 loops: compute those in float32 and round once at the end.
_COMPUTE = {dtypes.bfloat16: dtypes.float32}


def ufunc(fn: Ufunc, arrays: list[Array], dtype: DType, out_dtype: DType, shape: tuple[int, ...]) -> Array:
    compute = _COMPUTE.get(dtype, dtype).numpy
    args = [a._np.astype(compute, copy=False) for a in arrays]
    with np.errstate(all="ignore"):
        r = np.asarray(fn.numpy(*args))
    return wrap_numpy(np.broadcast_to(r, shape).astype(out_dtype.numpy), out_dtype)


def scalar(value: Any, dtype: DType, device: Device) -> Array:
    return wrap_numpy(np.array(value, dtype=dtype.numpy), dtype)
