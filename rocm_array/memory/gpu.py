"""The memory primitives on ``gpu:N`` devices: Arrays over the runtime's buffers.

The runtime deals in bytes and device addresses; this back gives them Array form:
allocation, fills and copies (``copies``, the kernels of ``rocm_array_kernels/copy``), host
transfers, and DLPack both ways (capsules made and read by ``runtime.dlpack``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..array import Array, contiguous_strides
from ..devices import Device, gpus
from ..dtypes import DType
from ..launch import address
from ..runtime import dlpack
from . import COPY, DLPACK_DEVICE, EMPTY, FILL, FROM_HOST, TO_DLPACK, TO_HOST, TO_OTHER, contiguous, share
from . import copy as copied
from .copies import copy, fill

__all__ = ["register", "import_dlpack"]


def empty(shape: tuple[int, ...], dtype: DType, device: Device) -> Array:
    buf = device.runtime.allocate(math.prod(shape) * dtype.itemsize)
    return Array(buf, shape, contiguous_strides(shape), 0, dtype, device)


def from_host(a: np.ndarray, dtype: DType, device: Device) -> Array:
    out = empty(a.shape, dtype, device)
    device.runtime.upload(out._buf.ptr, a)
    return out


def to_host(x: Array) -> np.ndarray:
    """A host copy of ``x``; a strided ``x`` is made contiguous on the device first."""
    c = contiguous(x)
    out = np.empty(x.shape, x.dtype.numpy)
    x.device.runtime.download(out, address(c))
    return out


def to_other(x: Array, device: Device) -> Array:
    """``x`` on another GPU: a peer copy where the platform allows it, else through the host
    (``GpuRuntime.peer_route`` says which); a strided ``x`` is made contiguous first."""
    c = contiguous(x)
    out = empty(x.shape, x.dtype, device)
    x.device.runtime.copy_to_peer(device.runtime, out._buf.ptr, address(c), x.size * x.dtype.itemsize)
    return out


def to_dlpack(x: Array, stream: Any, max_version: tuple[int, int] | None, dl_device: tuple[int, int] | None,
              copy: bool | None) -> Any:
    """``x.__dlpack__``: a capsule over ``x``'s memory, ordered before work on ``stream``."""
    rt = x.device.runtime
    here = rt.dlpack_device()
    if dl_device is not None and tuple(dl_device) != here:
        if tuple(dl_device) == (dlpack.DL_CPU, 0) and copy is not False:
            return to_host(x).__dlpack__(max_version=max_version, copy=True)
        raise BufferError(f"cannot export an array on {x.device} to DLPack device {dl_device}"
                          + (" without a copy" if copy is False else ""))
    if copy:
        x = copied(x)
    else:
        share(x)  # the consumer may write it
    rt.order_before(stream)
    versioned = max_version is not None and tuple(max_version) >= (1, 0)
    return dlpack.export(address(x), x.shape, x.strides, x.dtype, here, versioned, bool(copy), owner=x)


def import_dlpack(obj: Any, copy: bool | None = None) -> Array:
    """``from_dlpack`` for a producer on a GPU: zero-copy unless ``copy`` is True; the device is
    the GPU the producer names."""
    where = tuple(obj.__dlpack_device__())
    for dev in gpus():
        rt = dev.runtime
        if rt.dlpack_device() != where:
            continue
        try:
            capsule = obj.__dlpack__(stream=rt.driver.stream, max_version=(1, 0))
        except TypeError:  # a producer from before DLPack 1.0
            capsule = obj.__dlpack__(stream=rt.driver.stream)
        t = dlpack.import_capsule(capsule, where, str(dev))
        x = Array(t.buffer, t.shape, t.strides, t.offset, t.dtype, dev)
        if copy:
            return copied(x)
        share(x)  # the producer may write it
        return x
    raise BufferError(f"from_dlpack(): DLPack device {where} is not a GPU rocm_array found "
                      f"({', '.join(str(d) for d in gpus()) or 'none'})")


def register() -> None:
    """Fill the ``gpu`` column of the memory tables."""
    EMPTY["gpu"], FILL["gpu"], COPY["gpu"] = empty, fill, copy
    FROM_HOST["gpu"], TO_HOST["gpu"], TO_OTHER["gpu"] = from_host, to_host, to_other
    DLPACK_DEVICE["gpu"], TO_DLPACK["gpu"] = (lambda device: device.runtime.dlpack_device()), to_dlpack
