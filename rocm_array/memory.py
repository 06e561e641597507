"""The memory primitives every device provides: allocate, fill, strided cast-copy, host transfer.

Fronts built from these (creation, astype, concat, reshape-with-copy,
``__setitem__``…) run on every device. ``cpu`` does them with NumPy; a GPU
device delegates to its runtime (allocation on the stream-ordered pool, the
fill and copy kernels of ``kernels/copy``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .array import Array, contiguous_strides, wrap_numpy
from .devices import Device
from .dtypes import DType

__all__ = ["empty", "full", "copy_into", "from_host", "to_host", "contiguous"]


def empty(shape: tuple[int, ...], dtype: DType, device: Device) -> Array:
    """A new contiguous array with unspecified contents."""
    shape = tuple(shape)
    if device.kind == "cpu":
        return Array(np.empty(math.prod(shape), dtype.numpy), shape, contiguous_strides(shape), 0,
                     dtype, device)
    return device.runtime.empty(shape, dtype)


def full(shape: tuple[int, ...], value: bool | int | float | complex, dtype: DType, device: Device) -> Array:
    """A new contiguous array with every element ``value`` (cast to ``dtype``)."""
    out = empty(shape, dtype, device)
    if device.kind == "cpu":
        out._np[...] = value
    else:
        device.runtime.fill(out, value)
    return out


def copy_into(dst: Array, src: Array) -> None:
    """``dst[...] = src``: any strides on either side, src broadcast to dst, cast to dst's dtype.

    Overlapping views of one buffer are copied as if through a temporary.
    """
    if dst.device != src.device:
        raise ValueError(f"copy between devices {src.device} and {dst.device}; use to_device() first")
    if dst.size == 0:
        return
    if dst.device.kind == "cpu":
        s = src._np
        if np.shares_memory(dst._np, s):
            s = s.copy()
        with np.errstate(all="ignore"):
            np.copyto(dst._np, s, casting="unsafe")
    else:
        dst.device.runtime.copy(dst, src)


def contiguous(x: Array, dtype: DType | None = None) -> Array:
    """``x`` itself when row-major contiguous (and of ``dtype``, when given), else a contiguous copy cast to it."""
    dtype = x.dtype if dtype is None else dtype
    if x.dtype is dtype and x.is_contiguous:
        return x
    out = empty(x.shape, dtype, x.device)
    copy_into(out, x)
    return out


def from_host(a: Any, dtype: DType, device: Device) -> Array:
    """A new array on ``device`` holding the NumPy array ``a`` (already of dtype's storage type)."""
    a = np.asarray(a)
    if device.kind == "cpu":
        return wrap_numpy(np.array(a, dtype=dtype.numpy, copy=True), dtype)
    # np.asarray, not np.ascontiguousarray: the latter makes a 0-d array 1-d.
    return device.runtime.from_host(np.asarray(a, dtype=dtype.numpy, order="C"), dtype)


def to_host(x: Array) -> np.ndarray:
    """A NumPy copy (GPU) or view (cpu) of ``x``'s elements."""
    if x.device.kind == "cpu":
        return x._np
    return x.device.runtime.to_host(x)
