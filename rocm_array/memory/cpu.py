"""The memory primitives on the ``cpu`` device: NumPy arrays behind Arrays."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..array import Array, contiguous_strides, wrap_numpy
from ..devices import Device
from ..dtypes import DType, host_cast
from ..runtime import dlpack
from . import COPY, DLPACK_DEVICE, EMPTY, FILL, FROM_HOST, TO_DLPACK, TO_HOST

__all__ = ["register"]


def empty(shape: tuple[int, ...], dtype: DType, device: Device) -> Array:
    n = math.prod(shape)
    try:
        data = np.empty(n, dtype.numpy)
    except ValueError:  # NumPy's "array is too big": out of memory, as a GPU says it
        raise MemoryError(f"cpu is out of memory: {n * dtype.itemsize} bytes requested for an array of shape {shape} "
                          f"and dtype {dtype.name}, more than the host can address") from None
    return Array(data, shape, contiguous_strides(shape), 0, dtype, device)


def fill(x: Array, value: bool | int | float | complex) -> None:
    x._np[...] = host_cast(np.asarray(value), x.dtype)


def copy(dst: Array, src: Array) -> None:
    s = src._np
    if np.shares_memory(dst._np, s):
        s = s.copy()
    with np.errstate(all="ignore"):
        np.copyto(dst._np, host_cast(s, dst.dtype), casting="unsafe")


def from_host(a: np.ndarray, dtype: DType, device: Device) -> Array:
    return wrap_numpy(np.array(a, dtype=dtype.numpy, copy=True), dtype)


def to_host(x: Array) -> np.ndarray:
    return x._np


def to_dlpack(x: Array, stream: Any, max_version: tuple[int, int] | None, dl_device: tuple[int, int] | None,
              copy: bool | None) -> Any:
    if stream is not None:
        raise ValueError("__dlpack__(): stream must be None for the cpu device")
    if dl_device is not None and tuple(dl_device) != (dlpack.DL_CPU, 0):
        raise BufferError(f"__dlpack__(): a cpu array cannot be exported to DLPack device {tuple(dl_device)}; "
                          f"move it with to_device() first")
    given: dict[str, Any] = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
    return x._np.__dlpack__(**{k: v for k, v in given.items() if v is not None})


def register() -> None:
    """Fill the ``cpu`` column of the memory tables."""
    EMPTY["cpu"], FILL["cpu"], COPY["cpu"] = empty, fill, copy
    FROM_HOST["cpu"], TO_HOST["cpu"] = from_host, to_host
    DLPACK_DEVICE["cpu"], TO_DLPACK["cpu"] = (lambda device: (dlpack.DL_CPU, 0)), to_dlpack
