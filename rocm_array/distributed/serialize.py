"""Dask's serializers and size for rocm_array arrays, as ``distributed`` has them for CuPy's.

A chunk crosses processes (a worker's peer, the client, a spill to host memory) as a small
header and one frame of its elements' bytes: a GPU chunk is downloaded through the runtime's
pinned staging into that frame, and uploaded the same way on arrival. A chunk on the sender's
default device arrives on the receiver's default device when that is a GPU (with the
one-worker-per-GPU layout of ``LocalGPUCluster`` and the nanny preload, the worker's own card),
else on its first GPU. A chunk on another GPU (``gpu:1`` of a plain ``LocalCluster``, whose
workers all see the cards in one order) arrives on the same card, named by the visible-devices
variable's entry (``placement``), where the receiver sees it: computing on it there never mixes it
with chunks that stayed on that card. A ``cpu`` chunk stays on ``cpu``. Nothing is pickled: the
header holds the shape, the dtype's name, the device kind and that card's entry.

Between two worker processes of one machine, a chunk on the sender's own GPU goes through memory
both map instead (``ipc``): the header then holds an IPC handle and no frame, where the recipient
advertised in its handshake that it can take it (``transport.ChunkTransport``).

No ``cuda`` family (the one UCX uses to send device memory without the host): its frames are
CUDA buffers that the receiver builds with RMM or Numba, NVIDIA only, and rocm_array arrays have
no ``__cuda_array_interface__``; over TCP every frame is host bytes anyway.

This module imports neither Dask nor distributed: the ``numpy_dispatch`` plugin calls
``register_serializers`` and ``register_sizeof`` with their modules when those are imported,
before or after rocm_array, so that every process that has both has the same serializers (a
sender and a receiver must agree; an unregistered receiver could not read a chunk).
"""

from __future__ import annotations

import operator
from types import ModuleType
from typing import Any, Sequence

import numpy as np

from .. import devices, memory
from ..array import Array
from ..devices import Device
from ..dtypes import BY_NAME
from . import ipc
from .placement import visible_gpus

__all__ = ["serialize", "deserialize", "register_serializers", "register_sizeof", "arrival"]


def serialize(x: Array, context: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[memoryview]]:
    """``dask_serialize``: the header and the one frame of a chunk (a GPU's is downloaded here), or
    the header alone when the chunk goes through IPC to the recipient of Dask's ``context``."""
    header: dict[str, Any] = {"shape": list(x.shape), "dtype": x.dtype.name, "kind": x.device.kind}
    if x.device.kind == "gpu" and x.device != devices.default():
        header["card"] = visible_gpus()[1][x.device.index]
    lent = ipc.lend(x, context)
    if lent is not None:
        header["ipc"] = lent
        return header, []
    host = np.ascontiguousarray(memory.to_host(x))
    return header, [host.reshape(-1).view(np.uint8).data]


def arrival(kind: str, card: str | None = None) -> Device:
    """Where a chunk from a ``kind`` device arrives in this process: ``card`` (a visible-devices
    entry) where this process sees it, else the default device (see the module's docstring)."""
    if kind == "cpu":
        return devices.cpu
    if card is not None:
        ids = visible_gpus()[1]
        if card in ids:
            return devices.parse(f"gpu:{ids.index(card)}")
    here = devices.default()
    if here.kind == kind:
        return here
    found = devices.gpus()
    if found:
        return found[0]
    raise ValueError(f"a rocm_array chunk on a {kind} device arrived in a process without one "
                     f"({'; '.join(devices.gpu_problems()) or 'no GPU found'}); give this process a GPU, "
                     "or move the chunks to the host first (x.map_blocks(lambda b: b.to_device('cpu')))")


def deserialize(header: dict[str, Any], frames: Sequence[Any]) -> Array:
    """``dask_deserialize``: the chunk on this process's device of its kind (``arrival``)."""
    if "ipc" in header:
        return ipc.receive(header, arrival(header["kind"], header.get("card")))
    (frame,) = frames
    dtype = BY_NAME[header["dtype"]]
    host = np.frombuffer(frame, np.uint8).view(dtype.numpy).reshape(tuple(header["shape"]))
    return memory.from_host(host, dtype, arrival(header["kind"], header.get("card")))


def register_serializers(protocol: ModuleType) -> None:
    """Register with ``distributed.protocol.serialize`` (its ``dask_serialize``/``dask_deserialize``)."""
    protocol.dask_serialize.register(Array)(serialize)
    protocol.dask_deserialize.register(Array)(deserialize)


def register_sizeof(module: ModuleType) -> None:
    """Register with ``dask.sizeof``: without it Dask counts a chunk of any size as the 96 bytes of
    the Python object, and its memory accounting and spilling ignore GPU chunks."""
    module.sizeof.register(Array)(operator.attrgetter("nbytes"))  # (a view's elements, not its whole buffer)
