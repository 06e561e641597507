"""``GpuRuntime``: the Runtime protocol over any platform Driver (platform neutral).

It owns what both platforms share, in bytes and device addresses: allocation with
out-of-memory recovery, buffer lifetime, memset and copies, host transfers (with
pinned staging), the compiler and its caches, kernel loading and launching, and
stream ordering. Arrays are built above it, in ``rocm_array.memory``.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
import threading
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .buffer import DeviceBuffer, sweep
from .compiler import Compiler, Program
from .launcher import Launcher, launcher
from .protocol import DeviceProperties, Driver, DriverError, DriverOutOfMemory
from .staging import SMALL, STAGING_MIN, Staging

__all__ = ["GpuRuntime", "Event", "PeerRoute", "PEER_VAR"]

#: Set to 0: copies between GPUs go through the host even where peer access is possible (to
#: compare, or to avoid a platform's broken peer path). Read at the first copy between two devices.
PEER_VAR = "ROCM_ARRAY_PEER"


class _Pooled(DeviceBuffer):
    """A small block from a runtime's free lists (``GpuRuntime.allocate``): a DeviceBuffer made with no
    arguments (object's __init__, no frame), its fields stored by ``allocate``. ``object.__new__``, which
    it replaces, cost about 300 more of a small op's instructions: its call builds argument tuples."""

    __slots__ = ()

    __init__ = object.__init__


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} bytes"


class Event:
    """A point in the runtime's stream; ``elapsed_ms`` times the work between two of them."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self.handle = driver.event_create()

    def record(self) -> Event:
        self._driver.event_record(self.handle)
        return self

    def synchronize(self) -> None:
        self._driver.event_synchronize(self.handle)

    def elapsed_ms(self, end: Event) -> float:
        end.synchronize()
        return self._driver.event_elapsed_ms(self.handle, end.handle)

    def __del__(self) -> None:
        try:
            self._driver.event_destroy(self.handle)
        except Exception:  # at interpreter exit the driver may be gone
            pass


@dataclass(frozen=True)
class PeerRoute:
    """How bytes go from one GPU to another: ``direct`` (a peer copy) or through the host, and why."""

    direct: bool
    why: str

    def __str__(self) -> str:
        return ("peer copy" if self.direct else "staged through the host") + f" ({self.why})"


#: Blocks of at most this many bytes are kept for reuse when freed, by size rounded up to SMALL_STEP.
#: Not timed apart: a bound on what small blocks may hold (2048 sizes of at most 1 MiB), with the
#: rounding that of CuPy's pool (512 bytes).
SMALL_LIMIT = 1 << 20
SMALL_STEP = 512
#: Larger blocks up to MID_LIMIT are kept too, by size rounded up to an eighth of its power of two
#: (at most 12.5% more), while the kept ones total at most MID_KEEP bytes; the others go back to the
#: driver's pool, whose allocation and free are operations on the stream: a batched product's 8 MiB
#: result (512 products of 64x64 float32) made through the pool took 15.3 us on an H200, reused
#: 14.5 us (CuPy and PyTorch, whose pools keep every block: 14.3 us).
MID_LIMIT = 64 << 20
#: (a bound on device memory held back from other libraries, not a measured optimum)
MID_KEEP = 1 << 30


class GpuRuntime:
    """One ``gpu:N`` device (see ``protocol.Runtime``)."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.platform = driver.platform
        self.properties: DeviceProperties = driver.properties
        self.compiler = Compiler(driver.rtc(), self.properties.compile_arch or self.properties.arch,
                                 self.properties.wave_size)
        self._staging = Staging(driver)
        self._index = self.properties.index
        self._bins: dict[int, list[int]] = {}
        self._kept = 0  # bytes on the mid-size free lists
        self._modules: dict[str, dict[str, Any]] = {}
        self._kernels: dict[tuple[str, str, tuple[str, ...]], Any] = {}
        self._lock = threading.Lock()
        self._sync_event = driver.event_create()
        self._routes: dict[int, PeerRoute] = {}  # by the peer's index

    def __repr__(self) -> str:
        p = self.properties
        return f"<GpuRuntime {p.platform}:{p.index} {p.name} {p.arch}>"

    # -- memory ---------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> DeviceBuffer:
        """A new buffer; on exhaustion: collect garbage, trim the pool, retry once, then MemoryError.

        Blocks up to MID_LIMIT come from this runtime's free lists when one of their size class was
        freed: the op then makes no allocation call to the driver. The driver's stream-ordered pool
        does the same, but each call into it costs about a microsecond from Python, a large part of
        a small op, and is queued on the stream. Reuse needs no wait: a freed block was last used by
        work queued on the runtime's one stream, and its next user's work is queued after that. Like
        CuPy's pool, the lists keep what they get (the mid-size ones up to MID_KEEP bytes) until
        ``release_memory`` or an allocation that finds the device full gives it back.
        """
        index = self._index
        if nbytes == 0:
            return DeviceBuffer(0, 0, index, None)
        if nbytes <= SMALL_LIMIT:
            size = -(-nbytes // SMALL_STEP) * SMALL_STEP
            free = self._bins.get(size)
            if free is None:
                free = self._bins.setdefault(size, [])
            try:
                ptr = free.pop()
            except IndexError:
                ptr = self._malloc(size)
            # DeviceBuffer's fields stored here, not by its __init__: a small op's buffer is built on
            # its hot path, and the __init__ frame cost about 600 of its 19,000 instructions.
            buf: DeviceBuffer = _Pooled()
            buf.ptr = ptr
            buf.nbytes = nbytes
            buf.device_index = index
            buf.owner = buf.readers = None
            buf._release = free.append
            return buf
        if nbytes <= MID_LIMIT:
            step = 1 << (nbytes.bit_length() - 4)  # an eighth of the power of two below
            size = -(-nbytes // step) * step
            free = self._bins.setdefault(size, [])
            try:
                ptr = free.pop()
                self._kept -= size
            except IndexError:
                ptr = self._malloc(size)
            return DeviceBuffer(ptr, nbytes, index, functools.partial(self._keep, free, size))
        return DeviceBuffer(self._malloc(nbytes), nbytes, index, self.driver.free_async)

    def _keep(self, free: list[int], size: int, ptr: int) -> None:
        """A freed mid-size block: onto its free list, or back to the pool past MID_KEEP."""
        if self._kept + size > MID_KEEP:
            self.driver.free_async(ptr)
            return
        self._kept += size
        free.append(ptr)

    def _malloc(self, nbytes: int) -> int:
        d = self.driver
        total = self.properties.total_memory
        if nbytes > total:  # can never fit (and past 2^64 bytes the bindings would raise OverflowError)
            raise MemoryError(f"gpu:{self.properties.index} ({self.properties.name}) is out of memory: "
                              f"{_size(nbytes)} ({nbytes} bytes) requested, more than the device's {_size(total)}")
        try:
            return d.malloc_async(nbytes)
        except DriverOutOfMemory:
            sweep()  # (deferred results dropped uncomputed let the arrays they read go)
            gc.collect()  # Arrays in reference cycles hold buffers too
            self.release_memory()
            try:
                return d.malloc_async(nbytes)
            except DriverOutOfMemory:
                # A failed request can leave the pool holding what it reserved on the way:
                # give it back, so that this process and others can still use the device.
                self.release_memory()
                used, held = d.pool_usage()
                raise MemoryError(
                    f"gpu:{self.properties.index} ({self.properties.name}) is out of memory: "
                    f"{_size(nbytes)} ({nbytes} bytes) requested; the pool has {_size(used)} in use "
                    f"and {_size(held)} reserved of {_size(self.properties.total_memory)}") from None

    def release_memory(self) -> None:
        """Return unused memory to the driver: the free lists' blocks, then the pool's reservation."""
        for free in list(self._bins.values()):
            while free:
                self.driver.free_async(free.pop())
        self._kept = 0
        self.driver.synchronize()  # frees queued on the stream complete first
        self.driver.pool_trim(0)

    def memset(self, ptr: int, byte: int, nbytes: int) -> None:
        """Set ``nbytes`` bytes at device address ``ptr`` to ``byte`` (queued on the stream)."""
        if nbytes:
            self.driver.memset_d8(ptr, byte, nbytes)

    def memcpy(self, dst: int, src: int, nbytes: int) -> None:
        """Copy ``nbytes`` bytes between device addresses (queued on the stream)."""
        if nbytes:
            self.driver.memcpy(dst, src, nbytes, "dtod")

    def upload(self, dst: int, src: np.ndarray) -> None:
        """Copy the bytes of the C-contiguous host array ``src`` to device address ``dst``."""
        if src.nbytes >= STAGING_MIN:
            self._staging.upload(dst, src)
        elif src.nbytes:
            # Pageable memory: the driver copies it out before returning.
            self.driver.memcpy(dst, src.ctypes.data, src.nbytes, "htod")

    def download(self, dst: np.ndarray, src: int) -> None:
        """Copy device bytes at ``src`` into the C-contiguous host array ``dst``; returns when they are there."""
        if dst.nbytes >= STAGING_MIN:
            self._staging.download(dst, src)
        elif 0 < dst.nbytes <= SMALL:
            self._staging.download_small(dst, src)
        elif dst.nbytes:
            self.driver.memcpy(dst.ctypes.data, src, dst.nbytes, "dtoh")
            self.driver.synchronize()

    # -- other GPUs of this process -----------------------------------------------------------
    def peer_route(self, peer: GpuRuntime) -> PeerRoute:
        """How ``copy_to_peer`` moves bytes from this device to ``peer``, decided (and peer access
        enabled, both ways) at the first call for the pair."""
        route = self._routes.get(peer._index)
        if route is None:
            with self._lock:
                route = self._routes.get(peer._index)
                if route is None:
                    route = self._routes[peer._index] = self._decide_route(peer)
        return route

    def _decide_route(self, peer: GpuRuntime) -> PeerRoute:
        if os.environ.get(PEER_VAR, "").strip() == "0":
            return PeerRoute(False, f"{PEER_VAR}=0")
        mine, theirs = self.driver, peer.driver
        try:
            if not (mine.can_access_peer(theirs) and theirs.can_access_peer(mine)):
                return PeerRoute(False, f"the {self.platform} driver reports no peer access between "
                                        f"gpu:{self._index} and gpu:{peer._index}")
            # Both ways: a copy engine reads one side and writes the other, whichever stream it runs on.
            mine.enable_peer_access(theirs)
            theirs.enable_peer_access(mine)
        except DriverError as exc:
            return PeerRoute(False, f"enabling peer access failed: {exc}")
        return PeerRoute(True, "peer access enabled")

    def copy_to_peer(self, peer: GpuRuntime, dst: int, src: int, nbytes: int) -> None:
        """Copy ``nbytes`` at ``src`` on this device to ``dst`` on ``peer`` (see ``peer_route``).

        A peer copy is queued on this device's stream after ``peer``'s work so far (which made
        ``dst``), and ``peer``'s later work waits for it; so neither side waits on the host, and
        ``src`` can be freed at once (its free is queued after the copy). Else the bytes go
        through the host: a download into pageable memory and an upload, each through pinned
        staging when large.
        """
        if not nbytes:
            return
        if self.peer_route(peer).direct:
            peer._signal(self)
            self.driver.memcpy_peer(dst, peer.driver, src, nbytes)
            self._signal(peer)
            return
        host = np.empty(nbytes, np.uint8)
        self.download(host, src)
        peer.upload(dst, host)

    def _signal(self, waiter: GpuRuntime) -> None:
        """Work later queued on ``waiter``'s stream waits for everything queued on this one so far."""
        with self._lock:
            self.driver.event_record(self._sync_event)
            waiter.driver.stream_wait_event(waiter.driver.stream, self._sync_event)

    # -- interchange ------------------------------------------------------------------------
    def dlpack_device(self) -> tuple[int, int]:
        return (self.driver.dlpack_device_type, self.properties.index)

    def order_before(self, stream: Any) -> None:
        """Make work later queued on a consumer's ``stream`` (a DLPack stream number: None for the
        platform's default, -1 for none) wait for everything queued on this runtime so far."""
        if stream is None:
            stream = self.driver.dlpack_default_stream
        if stream != -1 and stream != self.driver.stream:
            with self._lock:
                self.driver.event_record(self._sync_event)
                self.driver.stream_wait_event(stream, self._sync_event)

    # -- kernels ------------------------------------------------------------------------------
    def compile(self, path: str, names: Sequence[str], options: Sequence[str] = ()) -> Program:
        """Compile (or fetch from the caches) ``names`` of ``rocm_array_kernels/<path>`` for this device."""
        return self.compiler.compile(path, names, options)

    def load(self, program: Program) -> dict[str, Any]:
        """The functions of a compiled program, by name expression (loaded once per device)."""
        module = self._modules.get(program.key)
        if module is None:
            with self._lock:
                module = self._modules.get(program.key)
                if module is None:
                    handle = self.driver.module_load(program.code)
                    module = {expr: self.driver.module_function(handle, lowered)
                              for expr, lowered in program.lowered.items()}
                    module["__module__"] = handle  # keeps the module loaded with its functions
                    self._modules[program.key] = module
        return module

    def kernel(self, path: str, name: str, group: Sequence[str] = (), options: Sequence[str] = ()) -> Any:
        """The loaded function ``name`` of ``rocm_array_kernels/<path>``, compiled with ``group`` (the other
        instantiations worth building in the same program)."""
        key = (path, name, tuple(options))  # the group only says what to build alongside
        fn = self._kernels.get(key)
        if fn is None:
            fn = self._kernels[key] = self.load(self.compile(path, self._names(path, name, group, options),
                                                             options))[name]
        return fn

    def prepare(self, kernels: Sequence[tuple[str, str, Sequence[str], Sequence[str]]]) -> None:
        """Make ready each (path, name, group, options) that ``kernel`` will be asked for, the
        programs not cached compiled at once (a call launching several new kernels then waits
        for the slowest compile, not for their sum)."""
        todo = {(path, name, tuple(options)): group for path, name, group, options in kernels
                if (path, name, tuple(options)) not in self._kernels}
        if not todo:
            return
        programs = [(path, self._names(path, name, group, options), options)
                    for (path, name, options), group in todo.items()]
        for ((path, name, options), _), program in zip(todo.items(), self.compiler.compile_all(programs)):
            self._kernels[(path, name, options)] = self.load(program)[name]

    def _names(self, path: str, name: str, group: Sequence[str], options: Sequence[str]) -> list[str]:
        """The instantiations to compile for ``name``: its group's program when the cache has it
        (``python -m rocm_array warm`` fills it; the group's own order is the KernelSource's, so
        its key is the one warmed); else ``name`` alone: a first call compiles only the
        instantiation it runs (the whole group of a reduction row took 30 s with NVRTC on an
        H200; one instantiation, a fraction of a second), and later processes find it in the
        cache too."""
        names = list(group) if name in group else [name, *group]
        if len(names) > 1 and self.compiler.rtc.granular and not self.compiler.cached(path, names, options):
            names = [name]
        return names

    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: Sequence[Any], shared: int = 0) -> None:
        """Queue ``function`` on this device's stream; ``args`` are ctypes values (see layout.py)."""
        params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.driver.sender(function, block, shared)(grid, ctypes.addressof(params))

    def launcher(self, function: Any, argtypes: Sequence[Any], block: tuple[int, int, int],
                 shared: int = 0) -> Launcher:
        """A launcher of ``function`` for arguments of ``argtypes``: the cheap launch of hot paths."""
        return launcher(self.driver, function, argtypes, block, shared)

    # -- ordering -------------------------------------------------------------------------------
    def event(self) -> Event:
        return Event(self.driver)

    def synchronize(self) -> None:
        self.driver.synchronize()
