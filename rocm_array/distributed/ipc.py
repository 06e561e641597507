"""Chunks between worker processes of one machine through GPU memory both map (IPC), not bytes.

Over Dask's TCP a chunk is downloaded, sent through the loopback at about 1.15 GB/s (64 MiB took
55 ms between two workers of an H200 machine) and uploaded again. Between two processes of one
machine the receiver can instead map the sender's memory and copy it GPU to GPU:

- **The sender** (``lend``) copies the chunk into an *export*: a plain allocation of its GPU
  (the pool's memory cannot be shared this way) with an acknowledgement word after the elements.
  The header carries the export's IPC handle and the transfer's generation; no frame of elements.
- **The receiver** (``receive``) maps the export, copies the elements onto its own GPU, writes the
  generation into the acknowledgement word after the copy (in stream order), and unmaps it.
- An export is lent again only once its word holds its last generation, so neither Dask's
  messages nor the order of releases decide how long the sender's memory must live. Receivers
  keep exports mapped for the next transfer (mapping costs more than a 64 MiB copy), so a sender
  keeps its exports until it ends.

The sender chooses this route only for a recipient that said, in its connection handshake, that
it can take it (``advertisement``, put there by ``transport.ChunkTransport`` in each worker): the
same machine (boot id and host name), another process, the same GPU platform, and a GPU that can
reach the chunk's GPU (peer access, or the same card). Everyone else (the client, the scheduler,
workers of other machines, workers without the plugin) gets the bytes, as before. A route not
taken for a recipient that advertised is counted with its reason (``stats``), never silent.

``ROCM_ARRAY_IPC=0`` turns the route off in the process that sets it (sending and advertising);
chunks under ``MIN_BYTES`` go as bytes, where mapping costs more than sending.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import socket
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import devices, memory
from ..array import Array
from ..devices import Device
from ..dtypes import BY_NAME
from ..launch import address
from ..runtime.protocol import DriverError, DriverOutOfMemory
from .placement import visible_gpus

__all__ = ["VAR", "KEY", "MIN_VAR", "advertisement", "lend", "receive", "stats", "EXPORT_SHARE", "ROUNDING",
           "MIN_BYTES"]

#: Set to 0: this process neither sends chunks through IPC nor offers to receive them so.
VAR = "ROCM_ARRAY_IPC"
#: The key of the advertisement in a Dask connection's handshake (and so in a serializer's context).
KEY = "rocm_array-ipc"
#: What a GPU's exports may hold at most, a share of its memory: past it, chunks go as bytes (counted).
#: Exports outlive a transfer (they are reused), and sit outside the pool and spilling's count.
EXPORT_SHARE = 0.125
#: Export sizes are rounded up to this, so that chunks of nearly one size share exports.
ROUNDING = 2 << 20
#: Room after the elements for the acknowledgement word (the platforms' allocation alignment).
ACK_ROOM = 256
#: Chunks of fewer bytes go as bytes, where those cost less. Between two H200s (``python -m
#: benchmarks.chunk_transfer``, the export mapped already) a chunk took 3.9 ms through IPC up to
#: 1 MiB, 4.9 ms at 4 MiB, 9.4 at 64 MiB; as bytes through a pipe 0.9 ms at 1 MiB, 7.1 at 4 MiB,
#: 108.9 at 64 MiB (Dask's TCP is slower still). ``ROCM_ARRAY_IPC_MIN_BYTES`` sets another floor.
MIN_BYTES = 4 << 20
MIN_VAR = "ROCM_ARRAY_IPC_MIN_BYTES"

_lock = threading.Lock()
_counts: collections.Counter[str] = collections.Counter()


def enabled() -> bool:
    return os.environ.get(VAR, "").strip() != "0"


def _host() -> str:
    """This machine, as two processes on it (not in two containers with their own names) both see it."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def advertisement() -> dict[str, Any] | None:
    """What this process tells its peers in the handshake, or None when it cannot take the route
    (turned off, or its default device is not a GPU)."""
    here = devices.default()
    if not enabled() or here.kind != "gpu":
        return None
    platform, cards = visible_gpus()
    return {"host": _host(), "pid": os.getpid(), "platform": platform, "card": cards[here.index]}


def _floor() -> int:
    raw = os.environ.get(MIN_VAR, "").strip()
    if not raw:
        return MIN_BYTES
    if not raw.isdigit():
        raise ValueError(f"{MIN_VAR}={raw!r}: expected a number of bytes (0: every chunk through IPC)")
    return int(raw)


def _count(what: str, nbytes: int = 0) -> None:
    with _lock:
        _counts[what] += 1
        _counts[what + " bytes"] += nbytes


def stats() -> dict[str, int]:
    """This process's transfers: ``sent``/``received`` through IPC (and their bytes), the exports it
    ``mapped``, and each reason a recipient that advertised still got bytes (``bytes: <reason>``)."""
    with _lock:
        return dict(_counts)


# -- the sender ------------------------------------------------------------------------------------

@dataclass
class _Export:
    ptr: int
    capacity: int  # bytes of elements; the acknowledgement word follows
    handle: bytes
    generation: int = 0


class _Exports:
    """One GPU's exports, lent one transfer at a time, and kept until the process ends: receivers
    keep them mapped (``receive``), and freeing memory another process has mapped is undefined."""

    def __init__(self, device: Device) -> None:
        self.runtime = device.runtime
        self.limit = int(EXPORT_SHARE * self.runtime.properties.total_memory)
        self.exports: list[_Export] = []
        self.lock = threading.Lock()
        self._word = np.zeros(1, np.uint64)

    def _acknowledged(self, e: _Export) -> bool:
        self.runtime.download(self._word, e.ptr + e.capacity)
        return int(self._word[0]) == e.generation

    def take(self, nbytes: int) -> _Export | str:
        """A free export of at least ``nbytes``, or why there is none."""
        for e in sorted(self.exports, key=lambda e: e.capacity):
            if e.capacity >= nbytes and self._acknowledged(e):
                return e
        capacity = -(-max(nbytes, 1) // ROUNDING) * ROUNDING
        if capacity > self.limit:
            return "the chunk is larger than the exports' limit"
        if sum(e.capacity for e in self.exports) + capacity > self.limit:
            return "the exports' limit is reached"
        driver = self.runtime.driver
        try:
            ptr = driver.ipc_alloc(capacity + ACK_ROOM)
        except DriverOutOfMemory:
            self.runtime.release_memory()  # the pool keeps freed memory; give it back and try once more
            try:
                ptr = driver.ipc_alloc(capacity + ACK_ROOM)
            except DriverOutOfMemory:
                return "out of device memory for an export"
        e = _Export(ptr, capacity, driver.ipc_handle(ptr))
        self.runtime.upload(ptr + capacity, np.zeros(1, np.uint64))
        self.exports.append(e)
        return e


_exports: dict[Device, _Exports] = {}


@atexit.register
def _free_exports() -> None:
    """The exports back to their GPUs (the simulator's are files, which would outlive the process)."""
    for exports in _exports.values():
        for e in exports.exports:
            with contextlib.suppress(Exception):  # a driver already shut down frees them itself
                exports.runtime.driver.ipc_free(e.ptr)
    _exports.clear()
_reach: dict[tuple[Device, str], str | None] = {}  # (chunk's device, recipient's card): why not, or None


def _why_not(x: Array, recipient: dict[str, Any]) -> str | None:
    """Why ``recipient`` cannot map ``x``'s memory, or None when it can."""
    if recipient.get("host") != _host():
        return "another machine"
    if recipient.get("pid") == os.getpid():
        return "this process"
    platform, cards = visible_gpus()
    if recipient.get("platform") != platform:
        return f"another platform ({recipient.get('platform')})"
    if x.device != devices.default():
        return "the chunk is not on this worker's own GPU"
    card = str(recipient.get("card"))
    key = (x.device, card)
    if key not in _reach:
        if card not in cards:
            _reach[key] = "the recipient's GPU is not visible here"
        else:
            theirs = devices.parse(f"gpu:{cards.index(card)}")
            same = theirs == x.device
            ok = same or theirs.runtime.driver.can_access_peer(x.device.runtime.driver)
            _reach[key] = None if ok else "the recipient's GPU cannot reach this one (no peer access)"
    return _reach[key]


def lend(x: Array, context: dict[str, Any] | None) -> dict[str, Any] | None:
    """The IPC part of ``x``'s header for the recipient in ``context`` (Dask's serializer context), or
    None for bytes: the recipient did not advertise, or cannot take it (counted)."""
    recipient = ((context or {}).get("recipient") or {}).get(KEY)
    if not recipient or x.device.kind != "gpu":
        return None
    floor = _floor()
    why = ("turned off here (ROCM_ARRAY_IPC=0)" if not enabled()
           else f"under {floor} bytes ({MIN_VAR})" if x.nbytes < floor else _why_not(x, recipient))
    if why is None:
        with _lock:
            exports = _exports.get(x.device) or _exports.setdefault(x.device, _Exports(x.device))
        c = memory.contiguous(x)
        with exports.lock:
            e = exports.take(c.nbytes)
            if not isinstance(e, str):
                e.generation += 1
                exports.runtime.memcpy(e.ptr, address(c), c.nbytes)
                exports.runtime.synchronize()  # the receiver's copy is not ordered after this one
                _count("sent", c.nbytes)
                return {"handle": e.handle, "ack": e.capacity, "generation": e.generation}
        why = e
    _count(f"bytes: {why}", x.nbytes)
    return None


# -- the receiver ----------------------------------------------------------------------------------

#: Exports this process keeps mapped, by (device, handle), the least recently used first. Mapping
#: costs more than the copy: 6.2-6.6 ms for a chunk of up to 1 MiB between two H200s, where a 64 MiB
#: copy took 11.5 ms with it (``python -m benchmarks.chunk_transfer``); a sender lends the same
#: exports again and again. Past ``MAPPED`` the oldest is unmapped (a sender that ended leaves its
#: mappings here until then).
_mapped: collections.OrderedDict[tuple[Device, bytes], int] = collections.OrderedDict()
MAPPED = 64
_receiving = threading.Lock()  # (a mapping is not unmapped while another thread copies from it)


def receive(header: dict[str, Any], device: Device) -> Array:
    """The chunk of an IPC header (``lend``), copied onto ``device``; the export acknowledged."""
    ipc = header["ipc"]
    out = memory.empty(tuple(header["shape"]), BY_NAME[header["dtype"]], device)
    runtime = device.runtime
    key = (device, ipc["handle"])
    with _receiving:
        src = _mapped.pop(key, None)
        if src is None:
            try:
                src = runtime.driver.ipc_open(ipc["handle"])
            except DriverError as exc:
                raise DriverError(f"a chunk sent GPU to GPU could not be mapped here ({exc}): the sender and this "
                                  "process share a machine's name and boot but not its GPU memory (containers "
                                  f"without a shared IPC namespace?); set {VAR}=0 on the workers to send chunks as "
                                  "bytes") from exc
            _count("mapped")
        _mapped[key] = src
        while len(_mapped) > MAPPED:
            (old_device, _), old = _mapped.popitem(last=False)
            with contextlib.suppress(DriverError):  # (its sender may have ended)
                old_device.runtime.driver.ipc_close(old)
        runtime.memcpy(address(out), src, out.nbytes)
        runtime.upload(src + ipc["ack"], np.array([ipc["generation"]], np.uint64))  # after the copy
        runtime.synchronize()
    _count("received", out.nbytes)
    return out
