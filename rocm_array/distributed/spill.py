"""A Dask worker's data that spills GPU chunks to host memory, as dask-cuda's ``device_memory_limit``.

``DeviceHostFile`` is a worker's ``data=`` mapping. Values that hold GPU memory (rocm_array arrays on
a GPU, or lists, tuples and dicts of them: a reduction's partial results) go to a ``zict.Buffer``
weighed by their device bytes; once those pass the limit, the least recently used ones are
serialized to host memory (the chunks' serializer: a download through pinned staging) and come back
to the worker's GPU when a task reads them. Other values live in a plain dict. As dask-cuda's, the
limit counts the chunks the worker holds, not the device's whole use (temporaries of running tasks,
other libraries): leave room for those.

Storing a GPU result also bounds how far the worker's thread runs ahead of its GPU (``RUN_AHEAD``):
the result's deferred work is queued, and the store waits for the result stored ``RUN_AHEAD``
stores earlier.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Hashable, Iterator, MutableMapping
from typing import Any

import zict
from dask.utils import parse_bytes
from distributed.protocol.serialize import deserialize, serialize

from .. import devices, fusion
from ..array import Array

__all__ = ["DeviceHostFile", "DEFAULT_LIMIT", "RUN_AHEAD", "device_limit", "device_bytes"]

#: The part of its GPU's memory a worker keeps chunks in before spilling them (dask-cuda's default).
DEFAULT_LIMIT = 0.8
#: How many stored GPU results a worker's thread may be ahead of its GPU. A task returns as soon as
#: its kernels are queued, so one thread could queue a whole graph's work at once, and a chunk that
#: another worker asks for is then downloaded behind all of it, on the same stream: on two H200s,
#: the partial products of ``x.T @ x`` (12 ms of GEMM each) crossed between workers at 0.51 GB/s,
#: where a rechunk's chunks crossed at 1.09. Two keeps the GPU fed while the thread runs a task's
#: Python; it was not tuned.
RUN_AHEAD = 2


def device_limit(spec: float | int | str | None, total: int) -> int:
    """``device_memory_limit`` in bytes, of a device of ``total`` bytes: a fraction (a float in (0, 1]),
    a number of bytes (an int, or a float above 1), or a string of either (``"0.8"``, ``"10 GiB"``);
    0 or None: no limit (never spill)."""
    if spec is None:
        return 0
    value: float | int
    if isinstance(spec, str):
        try:
            value = float(spec)
        except ValueError:
            try:
                value = parse_bytes(spec)
            except ValueError:
                raise ValueError(f"DeviceHostFile(): device_memory_limit={spec!r} is neither a fraction of the "
                                 "GPU's memory (0.8) nor a size ('10 GiB')") from None
    else:
        value = spec
    if isinstance(value, bool) or value < 0:
        raise ValueError(f"DeviceHostFile(): device_memory_limit={spec!r}: expected a fraction in (0, 1], "
                         "a number of bytes, or 0 for no limit")
    return int(value * total) if isinstance(value, float) and value <= 1 else int(value)


def _gpu_arrays(value: Any, depth: int = 0) -> Iterator[Array]:
    """The GPU arrays a worker's value holds: itself, or those of a list, tuple or dict (a reduction's
    partial results), four levels down."""
    if isinstance(value, Array):
        if value.device.kind == "gpu":
            yield value
    elif depth < 4 and isinstance(value, (list, tuple)):
        for v in value:
            yield from _gpu_arrays(v, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for v in value.values():
            yield from _gpu_arrays(v, depth + 1)


def device_bytes(value: Any) -> int:
    """The GPU bytes a worker's value holds (``_gpu_arrays``)."""
    return sum(a.nbytes for a in _gpu_arrays(value))


def _to_host(value: Any) -> tuple[dict[str, Any], list[Any]]:
    header, frames = serialize(value, serializers=("dask", "pickle"), on_error="raise")
    return header, frames


def _to_device(stored: tuple[dict[str, Any], list[Any]]) -> Any:
    return deserialize(*stored)


class DeviceHostFile(MutableMapping[Hashable, Any]):
    """A worker's data: GPU values spill to host memory past ``device_memory_limit`` (see the module).

    ``device_memory_limit`` is a fraction of the memory of the worker's default device (a GPU), a
    number of bytes, or a string of either; 0 or None never spills. On a worker whose default
    device is ``cpu`` every value is host memory already, and nothing spills.
    """

    def __init__(self, device_memory_limit: float | int | str | None = DEFAULT_LIMIT) -> None:
        home = devices.default()
        total = home.runtime.properties.total_memory if home.kind == "gpu" else 0
        self.limit = device_limit(device_memory_limit, total) if total else 0
        self.host: dict[Hashable, Any] = {}  # values that hold no GPU memory
        self.spilled: dict[Hashable, Any] = {}  # GPU values as host bytes
        self.on_device: dict[Hashable, Any] = {}
        self.spills = self.unspills = self.spilled_bytes = 0
        self._lock = threading.Lock()
        self._runtime = home.runtime if home.kind == "gpu" else None
        self._marks: deque[Any] = deque()  # the Events recorded after the last stored results
        self.device = zict.Buffer(self.on_device, zict.Func(_to_host, _to_device, self.spilled),
                                  n=self.limit or float("inf"), weight=lambda k, v: device_bytes(v),
                                  fast_to_slow_callbacks=self._spilled, slow_to_fast_callbacks=self._unspilled)

    def _spilled(self, key: Hashable, value: Any) -> None:
        self.spills += 1
        self.spilled_bytes += device_bytes(value)

    def _unspilled(self, key: Hashable, value: Any) -> None:
        self.unspills += 1

    @property
    def device_bytes(self) -> int:
        """The GPU bytes of the values held on the device now."""
        return int(sum(device_bytes(v) for v in list(self.on_device.values())))

    def __setitem__(self, key: Hashable, value: Any) -> None:
        arrays = list(_gpu_arrays(value))
        on_device = sum(a.nbytes for a in arrays) > 0
        if on_device:
            for a in arrays:
                fusion.compute(a)  # (its deferred work queued now: the run-ahead mark follows it)
        with self._lock:
            if on_device:
                self.host.pop(key, None)
                self.device[key] = value
            else:
                self.device.pop(key, None)
                self.host[key] = value
        if on_device and self._runtime is not None:
            self._run_ahead(self._runtime)

    def _run_ahead(self, rt: Any) -> None:
        """Mark the stream after this result; wait for the mark ``RUN_AHEAD`` results back (outside the
        lock: the worker's comm reads other values meanwhile)."""
        with self._lock:
            self._marks.append(rt.event().record())
            oldest = self._marks.popleft() if len(self._marks) > RUN_AHEAD else None
        if oldest is not None:
            oldest.synchronize()

    def __getitem__(self, key: Hashable) -> Any:
        if key in self.host:
            return self.host[key]
        return self.device[key]

    def __delitem__(self, key: Hashable) -> None:
        with self._lock:
            if key in self.host:
                del self.host[key]
            else:
                del self.device[key]

    def __contains__(self, key: object) -> bool:
        return key in self.host or key in self.device

    def __iter__(self) -> Iterator[Hashable]:
        yield from list(self.host)
        yield from list(self.device)

    def __len__(self) -> int:
        return len(self.host) + len(self.device)

    def __repr__(self) -> str:
        return (f"<DeviceHostFile: {len(self.on_device)} on the GPU ({self.device_bytes} bytes of a "
                f"{self.limit or 'unlimited'} limit), {len(self.spilled)} spilled to host, {len(self.host)} host values>")
