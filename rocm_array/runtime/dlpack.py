"""DLPack capsules of device memory, both ways, zero-copy (platform neutral, ctypes only).

Bytes and layouts only: ``rocm_array.memory`` wraps them as Arrays. Export: a
``dltensor_versioned`` capsule (DLPack 1.x, when the consumer asks with
``max_version >= (1, 0)``) or a legacy ``dltensor`` one, which keeps ``owner``
(the exported Array, and so its buffer) alive until the consumer calls the
deleter, or until the capsule is found dropped unconsumed (``sweep``). Import: a
producer's capsule becomes a buffer over its memory, which calls the producer's
deleter when it goes.
"""

from __future__ import annotations

import ctypes
import functools
import math
import sys
from typing import Any, NamedTuple

from .. import dtypes
from ..dtypes import DType
from .buffer import DeviceBuffer
from .layout import contiguous_strides

__all__ = ["export", "import_capsule", "Imported", "DL_CPU"]

DL_CPU = 1
_VERSION = (1, 1)
_FLAG_IS_COPIED = 2

_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_USED = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

# DLDataTypeCode per dtype kind; bfloat16 has its own code.
_CODE = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_BFLOAT = 4


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
#: What each exported tensor keeps alive (its struct, shape/strides arrays, the Array), by struct address.
_exported: dict[int, tuple[Any, ...]] = {}
#: The capsules not yet consumed, with their names, by tensor address. The capsules have no
#: destructor: one written in Python ran while a consumer that refused the capsule (NumPy, for
#: another device's) had its exception pending, cleared it, and Python then raised SystemError.
#: ``sweep`` finds the dropped ones instead.
_unconsumed: dict[int, tuple[Any, bytes]] = {}


def _delete(address: int | None) -> None:
    """The DLManagedTensor deleter a consumer calls: drop what the export kept alive."""
    _exported.pop(address or 0, None)


# The C function pointer of the deleter (kept here, so it lives as long as the module).
_deleter = _DELETER(_delete)


def _references(entry: tuple[Any, bytes]) -> int:
    """How many references the first item of ``entry`` has (as counted from here)."""
    held, _ = entry
    return sys.getrefcount(held)


#: An entry whose object only it holds: its count is a dropped capsule's (measured at each sweep, as
#: what CPython counts differs between versions).
_ALONE: tuple[Any, bytes] = (object(), b"")


def sweep() -> None:
    """Forget the capsules a consumer took (renamed ``used_*``: it calls the deleter) and release
    what the dropped ones kept alive (nobody but ``_unconsumed`` holds them). Runs at each export."""
    alone = _references(_ALONE)
    for address, entry in list(_unconsumed.items()):
        if not _api.PyCapsule_IsValid(entry[0], entry[1]):
            del _unconsumed[address]
        elif _references(entry) <= alone:
            del _unconsumed[address]
            _exported.pop(address, None)


def _dl_dtype(dtype: DType) -> _DataType:
    code = _BFLOAT if dtype is dtypes.bfloat16 else _CODE[dtype.kind]
    return _DataType(code, dtype.itemsize * 8, 1)


def export(data: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: DType, device: tuple[int, int],
           versioned: bool, copied: bool, owner: Any) -> Any:
    """A capsule describing the elements at device address ``data`` (strides in elements)."""
    ndim = len(shape)
    dims = (ctypes.c_int64 * max(ndim, 1))(*shape)
    steps = (ctypes.c_int64 * max(ndim, 1))(*strides)
    tensor = _Tensor(data, _Device(*device), ndim, _dl_dtype(dtype),
                     ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64)),
                     ctypes.cast(steps, ctypes.POINTER(ctypes.c_int64)), 0)
    deleter = ctypes.cast(_deleter, ctypes.c_void_p).value
    if versioned:
        managed: Any = _ManagedVersioned(_Version(*_VERSION), None, deleter,
                                         _FLAG_IS_COPIED if copied else 0, tensor)
        name = _NAME_VERSIONED
    else:
        managed = _Managed(tensor, None, deleter)
        name = _NAME
    address = ctypes.addressof(managed)
    sweep()
    _exported[address] = (managed, dims, steps, owner)
    capsule = _api.PyCapsule_New(address, name, None)
    _unconsumed[address] = (capsule, name)
    return capsule


def _dtype_of(t: _Tensor) -> DType:
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    for d in dtypes.ALL:
        if lanes == 1 and d.itemsize * 8 == bits and _dl_dtype(d).code == code:
            return d
    raise BufferError(f"DLPack dtype (code {code}, {bits} bits, {lanes} lanes) has no rocm_array dtype")


def _release(deleter: int, address: int, _ptr: int) -> None:
    _DELETER(deleter)(address)


class Imported(NamedTuple):
    """A producer's tensor: a buffer from the lowest address it touches, and its layout in elements."""

    buffer: DeviceBuffer
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    dtype: DType


def import_capsule(capsule: Any, expect: tuple[int, int], where_name: str) -> Imported:
    """The memory a producer's capsule describes (no copy), consumed.

    ``expect`` is the DLPack (device type, id) of the importing device (``where_name``
    in messages); a capsule for any other device is a BufferError.
    """
    cls: type[ctypes.Structure]
    if _api.PyCapsule_IsValid(capsule, _NAME_VERSIONED):
        name, used, cls = _NAME_VERSIONED, _USED_VERSIONED, _ManagedVersioned
    elif _api.PyCapsule_IsValid(capsule, _NAME):
        name, used, cls = _NAME, _USED, _Managed
    else:
        raise BufferError("not a DLPack capsule, or one already consumed")
    address = _api.PyCapsule_GetPointer(capsule, name)
    managed = cls.from_address(address)
    if cls is _ManagedVersioned and managed.version.major > _VERSION[0]:
        raise BufferError(f"DLPack {managed.version.major}.x tensors are not supported")
    t = managed.dl_tensor
    where = (t.device.device_type, t.device.device_id)
    if where != expect:
        raise BufferError(f"the DLPack tensor is on device {where}, not on {where_name} {expect}")
    dtype = _dtype_of(t)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else contiguous_strides(shape)
    _api.PyCapsule_SetName(capsule, used)  # consumed: the deleter is ours to call now
    release = functools.partial(_release, managed.deleter, address) if managed.deleter else None
    # The buffer starts at the lowest address the tensor touches (strides may be negative).
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0) if math.prod(shape) else 0
    extent = 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides)) if math.prod(shape) else 0
    base = (t.data or 0) + t.byte_offset + low * dtype.itemsize
    return Imported(DeviceBuffer(base, extent * dtype.itemsize, expect[1], release), shape, strides, -low, dtype)
