"""The memory primitives every device provides: allocate, fill, strided cast-copy, host transfer, DLPack.

Fronts built from these (creation, astype, concat, reshape-with-copy,
``__setitem__``…) run on every device. Each primitive is a front here and a back
per device kind in the ``Backs`` tables below, as the plugins' functions are:
``memory.cpu`` does them with NumPy, ``memory.gpu`` over the device's runtime
(allocation on the stream-ordered pool, the fill and copy kernels of
``rocm_array_kernels/copy``, pinned staging, DLPack capsules). Each back module fills these
tables from its ``register()``, which the package shim (``rocm_array/__init__``)
calls: this front imports neither back, so ``Array`` can use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import dtypes
from ..backs import Backs
from ..runtime.buffer import SHARED, UNSETTLED, Buffer, DeviceBuffer, settle

if TYPE_CHECKING:
    from ..array import Array
    from ..devices import Device
    from ..dtypes import DType

__all__ = ["empty", "full", "fill", "copy_into", "copy", "contiguous", "overlaps", "same_elements", "index_report",
           "reported_index", "from_host",
           "to_host", "to_other", "before_write",
           "share", "dlpack_device", "to_dlpack", "EMPTY", "FILL", "COPY", "FROM_HOST", "TO_HOST", "TO_OTHER", "DLPACK_DEVICE",
           "TO_DLPACK"]

#: ``back(shape, dtype, device)``: a new contiguous Array with unspecified contents.
EMPTY = Backs("memory allocations")
#: ``back(x, value)``: every element of ``x`` set to ``value``, converted as NumPy assigns it.
FILL = Backs("memory fills")
#: ``back(dst, src)``: ``dst[...] = src`` on one device, src broadcast and cast, overlap allowed.
COPY = Backs("memory copies")
#: ``back(a, dtype, device)``: a new Array holding the C-contiguous host array ``a``.
FROM_HOST = Backs("host-to-device transfers")
#: ``back(x)``: a host copy (or, on cpu, a view) of ``x``'s elements.
TO_HOST = Backs("device-to-host transfers")
#: ``back(x, device)``: a new contiguous Array on another device of ``x``'s kind with ``x``'s elements.
TO_OTHER = Backs("copies between devices of one kind")
#: ``back(device)``: the DLPack (device type, id) of a device.
DLPACK_DEVICE = Backs("DLPack devices")
#: ``back(x, stream, max_version, dl_device, copy)``: ``x.__dlpack__``.
TO_DLPACK = Backs("DLPack exports")


def empty(shape: tuple[int, ...], dtype: DType, device: Device) -> Array:
    """A new contiguous array with unspecified contents."""
    return cast("Array", EMPTY[device.kind](tuple(shape), dtype, device))


def full(shape: tuple[int, ...], value: bool | int | float | complex, dtype: DType, device: Device) -> Array:
    """A new contiguous array with every element ``value`` (cast to ``dtype``)."""
    out = empty(shape, dtype, device)
    FILL[device.kind](out, value)
    return out


def fill(x: Array, value: bool | int | float | complex) -> None:
    """Every element of ``x`` (any strides) set to ``value``, cast to ``x``'s dtype."""
    if x.size:
        FILL[x.device.kind](x, value)


def copy_into(dst: Array, src: Array) -> None:
    """``dst[...] = src``: any strides on either side, src broadcast to dst, cast to dst's dtype.

    Overlapping views of one buffer are copied as if through a temporary.
    """
    if dst.device != src.device:
        raise ValueError(f"copy between devices {src.device} and {dst.device}; use to_device() first")
    if dst.size:
        COPY[dst.device.kind](dst, src)


def copy(x: Array, dtype: DType | None = None) -> Array:
    """A new contiguous array with ``x``'s elements, cast to ``dtype`` when given."""
    out = empty(x.shape, x.dtype if dtype is None else dtype, x.device)
    copy_into(out, x)
    return out


def contiguous(x: Array, dtype: DType | None = None) -> Array:
    """``x`` itself when row-major contiguous (and of ``dtype``, when given), else a contiguous copy cast to it."""
    if (dtype is None or x.dtype is dtype) and x.is_contiguous:
        return x
    return copy(x, dtype)


def _bases(a: Array, b: Array) -> tuple[int, int] | None:
    """Where ``a``'s and ``b``'s offsets count from, to compare them: (0, 0) for views of one buffer,
    the addresses of two device buffers on one device (one allocation can come as two: a tensor
    imported twice through DLPack), None when they cannot share memory (a deferred result's memory
    is new; cpu arrays of two buffers are NumPy's to check)."""
    ab, bb = a._buf, b._buf
    if ab is bb:
        return 0, 0
    if isinstance(ab, DeviceBuffer) and isinstance(bb, DeviceBuffer) and ab.device_index == bb.device_index:
        return ab.ptr, bb.ptr
    return None


def _span(x: Array) -> tuple[int, int]:
    """The byte range (from x's buffer's start) that ``x`` touches (one walk of the strides: every
    copy asks, twice)."""
    lo = hi = x._offset
    for n, s in zip(x._shape, x._strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    item = x._dtype.itemsize
    return lo * item, (hi + 1) * item


def overlaps(a: Array, b: Array) -> bool:
    """Whether ``a`` and ``b`` may touch a common byte (their byte ranges intersect; conservative)."""
    bases = _bases(a, b)
    if bases is None or a.size == 0 or b.size == 0:
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return bases[0] + a0 < bases[1] + b1 and bases[1] + b0 < bases[0] + a1


def same_elements(a: Array, b: Array) -> bool:
    """Whether ``a`` and ``b`` are the same memory element for element (same start, shape, strides
    and item size): an elementwise write of one from the other is then safe in place."""
    bases = _bases(a, b)
    return (bases is not None and a.shape == b.shape and a.strides == b.strides
            and a.dtype.itemsize == b.dtype.itemsize
            and bases[0] + a.offset * a.dtype.itemsize == bases[1] + b.offset * b.dtype.itemsize)


def index_report(device: Device, zeroed: bool = True) -> Array:
    """The two words a kernel's ``ra_report_index`` (rocm_array_kernels/common/indexing.h) writes: a tag,
    nonzero once an index was reported, and that index. Zeroed unless it is never read."""
    return full((2,), 0, dtypes.uint64, device) if zeroed else empty((2,), dtypes.uint64, device)


def reported_index(report: Array) -> tuple[int, int]:
    """The (tag, index) an ``index_report`` holds after its kernel ran; tag 0: none reported."""
    tag, value = (int(v) for v in to_host(report).view(np.int64))
    return tag, value


def from_host(a: Any, dtype: DType, device: Device) -> Array:
    """A new array on ``device`` holding the NumPy array ``a`` (cast to dtype's storage type)."""
    # np.asarray, not np.ascontiguousarray: the latter makes a 0-d array 1-d.
    a = dtypes.host_cast(np.asarray(a), dtype)
    return cast("Array", FROM_HOST[device.kind](np.asarray(a, dtype=dtype.numpy, order="C"), dtype, device))


def to_host(x: Array) -> np.ndarray:
    """A NumPy copy (GPU) or view (cpu) of ``x``'s elements."""
    return cast("np.ndarray", TO_HOST[x.device.kind](x))


def to_other(x: Array, device: Device) -> Array:
    """A copy of ``x`` on ``device``, another device of the same kind (``gpu:0`` to ``gpu:1``)."""
    return cast("Array", TO_OTHER[device.kind](x, device))


def before_write(x: Array) -> None:
    """Before ``x``'s memory is written in place: the deferred results that read it (see
    ``rocm_array.fusion``) are computed first, from the values they were given."""
    buf = x._buf
    if not isinstance(buf, Buffer):  # (a cpu array's buffer is NumPy's: nothing deferred)
        return
    if UNSETTLED:
        settle()
    readers = buf.readers
    if readers and readers is not SHARED:
        buf.readers = None
        for ref in readers:
            pending = ref()
            if pending is not None:
                pending.force()


def share(x: Array) -> None:
    """``x``'s memory is shared with another library (DLPack), which may write it at any time:
    results that read it are computed now, and none is deferred over it from now on."""
    before_write(x)
    if isinstance(x._buf, Buffer):
        x._buf.readers = SHARED


def dlpack_device(device: Device) -> tuple[int, int]:
    """``__dlpack_device__`` of arrays on ``device``."""
    return cast("tuple[int, int]", DLPACK_DEVICE[device.kind](device))


def to_dlpack(x: Array, stream: Any, max_version: tuple[int, int] | None, dl_device: tuple[int, int] | None,
              copy: bool | None) -> Any:
    """``x.__dlpack__(...)``: a capsule over ``x``'s memory (or a copy's, where asked or needed)."""
    return TO_DLPACK[x.device.kind](x, stream, max_version, dl_device, copy)
