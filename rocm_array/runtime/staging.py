"""Host <-> device copies of large arrays through pinned staging buffers (platform neutral).

Pageable host memory cannot be read by the GPU's copy engine directly. Large
transfers go in chunks through two pinned buffers used in turn, so the host's
copy into (or out of) one overlaps the DMA of the other; mid-size ones go straight
to the driver, whose own staging is cheaper to start, and the smallest downloads
through one small pinned buffer (a copy engine's write to pinned memory starts
sooner than the driver's staged one). The host side of each
chunk is copied by several threads (NumPy releases the GIL for the copy): one
thread's memcpy is slower than the DMA (measured on an H200: about 12 GB/s for
one thread, 55 GB/s for pinned DMA, 17-19 GB/s for the driver's pageable path).
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .protocol import Driver

__all__ = ["Staging", "STAGING_MIN", "CHUNK", "SMALL"]

#: Transfers at least this large use the pinned buffers (measured on an H200: at 64 MiB
#: staging gives 26 GB/s against the driver's 19, at 1 GiB 32 against 11; at 4 MiB it loses).
STAGING_MIN = 32 << 20
#: Bytes per pinned buffer (two per device). A 1 GiB upload and download on an H200 (16 host cores,
#: one process a value): 13.1 and 6.7 GB/s at 8 MiB, 19.9 and 8.6 at 16, 22.0-26.5 and 9.8-10.6 at
#: 32, 23.3 and 12.1 at 64, 22.9 and 13.1 at 128: uploads peak here, downloads gain a little beyond.
CHUNK = 32 << 20
#: Downloads of at most this many bytes (a scalar, a count, a few indices) go through one small
#: pinned buffer instead: in scikit-learn's LinearDiscriminantAnalysis on an H200 (23 such
#: downloads a fit), a pageable copy of a few bytes took 35 us of the GPU's timeline on average,
#: PyTorch's pinned ones 1.5 us (CUPTI).
SMALL = 64 << 10
#: Threads copying between pageable and pinned memory. The same 1 GiB transfers (16 host cores):
#: 10.1 and 4.9 GB/s with 2, 17.6 and 7.7 with 4, 22.0-26.5 and 9.8-10.6 with 8, 21.1 and 12.5 with 16.
WORKERS = max(1, min(8, os.cpu_count() or 1))
#: Pieces smaller than this are not worth a thread.
_MIN_PIECE = 1 << 20


class Staging:
    """Two pinned chunks and an event each; the buffers are allocated at first use."""

    def __init__(self, driver: Driver, chunk: int = CHUNK) -> None:
        self._driver = driver
        self._chunk = chunk
        self._lock = threading.Lock()
        self._ptrs: list[int] = []
        self._views: list[np.ndarray] = []
        self._events: list[Any] = []
        self._threads: ThreadPoolExecutor | None = None
        self._small_lock = threading.Lock()
        self._small = 0  # the small pinned buffer, allocated at first use

    def _ready(self) -> None:
        if self._ptrs:
            return
        for _ in range(2):
            ptr = self._driver.host_alloc(self._chunk)
            self._ptrs.append(ptr)
            self._views.append(np.ctypeslib.as_array((ctypes.c_uint8 * self._chunk).from_address(ptr)))
            self._events.append(self._driver.event_create())
        if WORKERS > 1:
            self._threads = ThreadPoolExecutor(WORKERS, thread_name_prefix="rocm_array-staging")

    def _copy(self, dst: np.ndarray, src: np.ndarray) -> None:
        """``dst[:] = src`` for byte arrays, split across the threads."""
        step = max(_MIN_PIECE, -(-dst.size // WORKERS))
        if self._threads is None or step >= dst.size:
            np.copyto(dst, src)
            return
        pieces = range(0, dst.size, step)
        for _ in self._threads.map(lambda i: np.copyto(dst[i:i + step], src[i:i + step]), pieces):
            pass

    def download_small(self, dst: np.ndarray, src: int) -> None:
        """Copy the device bytes at ``src`` into the contiguous ``dst`` of at most SMALL bytes
        through the small pinned buffer; returns when they are there."""
        d = self._driver
        with self._small_lock:
            if not self._small:
                self._small = d.host_alloc(SMALL)
            d.memcpy(self._small, src, dst.nbytes, "dtoh")
            d.synchronize()
            ctypes.memmove(dst.ctypes.data, self._small, dst.nbytes)

    def upload(self, dst: int, src: np.ndarray) -> None:
        """Copy the bytes of the contiguous ``src`` to device address ``dst`` (queued on the stream)."""
        data = src.reshape(-1).view(np.uint8)
        d = self._driver
        with self._lock:
            self._ready()
            for k, start in enumerate(range(0, data.size, self._chunk)):
                b = k % 2
                n = min(self._chunk, data.size - start)
                d.event_synchronize(self._events[b])  # the DMA that last read buffer b is done
                self._copy(self._views[b][:n], data[start:start + n])
                d.memcpy(dst + start, self._ptrs[b], n, "htod")
                d.event_record(self._events[b])

    def download(self, dst: np.ndarray, src: int) -> None:
        """Copy device bytes at ``src`` into the contiguous ``dst``; returns when they are there."""
        data = dst.reshape(-1).view(np.uint8)
        d = self._driver
        with self._lock:
            self._ready()
            pending: tuple[int, int, int] | None = None
            for k, start in enumerate(range(0, data.size, self._chunk)):
                b = k % 2
                n = min(self._chunk, data.size - start)
                d.memcpy(self._ptrs[b], src + start, n, "dtoh")  # stream order: after buffer b's last use
                d.event_record(self._events[b])
                if pending:
                    self._drain(data, *pending)
                pending = (b, start, n)
            if pending:
                self._drain(data, *pending)

    def _drain(self, data: np.ndarray, b: int, start: int, n: int) -> None:
        self._driver.event_synchronize(self._events[b])
        self._copy(data[start:start + n], self._views[b][:n])
