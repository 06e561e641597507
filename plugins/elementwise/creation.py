"""Creation functions (fronts)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rocm_array import devices, dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.dtypes import DType
from rocm_array.hookspecs import Impl


def asarray(obj: Any, /, *, dtype: DType | None = None, device: Any = None, copy: bool | None = None) -> Array:
    dev = devices.resolve(device)
    if isinstance(obj, Array):
        out = obj if dtype is None or dtype == obj.dtype else None
        if out is None:
            raise NotImplementedError("asarray with a dtype change")
        return out.to_device(dev)
    a = np.asarray(obj, dtype=None if dtype is None else dtype.numpy)
    return wrap_numpy(a, dtype)


IMPLS = [Impl("asarray", asarray)]
