"""The runtime protocol: what a GPU platform provides, in two layers.

``Driver`` is the small surface each platform module implements over its
bindings (``amd``: hip-python; ``nvidia``: cuda-bindings): allocation on a
stream, copies, memset, events, run-time compilation, module loading, launch.
``Runtime`` is what the rest of rocm_array uses on a ``gpu:N`` device; one
platform-neutral class (``gpu.GpuRuntime``) implements it over any Driver.
Both deal in bytes: device handles and pointers cross them as plain ints, and
Arrays are built above them (``rocm_array.memory``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np

if TYPE_CHECKING:
    from .buffer import DeviceBuffer
    from .compiler import Compiler, Program, Rtc
    from .launcher import Launcher

__all__ = ["DeviceProperties", "DriverError", "DriverOutOfMemory", "Driver", "Runtime"]


@dataclass(frozen=True)
class DeviceProperties:
    """What the driver reports about one GPU (all queried, nothing assumed)."""

    platform: str  # "amd" or "nvidia"
    index: int  # the platform's device ordinal
    name: str
    arch: str  # "gfx90a", "gfx1030", "sm_90"
    wave_size: int
    compute_units: int
    total_memory: int  # bytes
    compile_arch: str = ""  # what the compiler is given, when it differs ("gfx90a:sramecc+:xnack-")


class DriverError(RuntimeError):
    """A driver call failed; the message names the call and the driver's error."""


class DriverOutOfMemory(DriverError):
    """An allocation failed for lack of device memory (recoverable)."""


class Driver(Protocol):
    """One device of one platform, as its bindings expose it. Every call is on ``stream``."""

    platform: str
    dlpack_device_type: int  # kDLCUDA (2) or kDLROCM (10)
    dlpack_default_stream: int  # the number DLPack gives the platform's default stream (CUDA's legacy: 1; ROCm: 0)
    properties: DeviceProperties
    stream: int  # the handle of the stream rocm_array works on

    def activate(self) -> None: ...
    def rtc(self) -> Rtc: ...
    def malloc_async(self, nbytes: int) -> int: ...
    def free_async(self, ptr: int) -> None: ...
    def pool_usage(self) -> tuple[int, int]: ...
    def pool_trim(self, keep: int) -> None: ...
    def memcpy(self, dst: int, src: int, nbytes: int, kind: str) -> None: ...  # "htod", "dtoh", "dtod"
    def memset_d8(self, ptr: int, value: int, nbytes: int) -> None: ...
    # Peers: another Driver of the same platform in this process.
    def can_access_peer(self, peer: Any) -> bool: ...  # whether this device can map peer's memory
    def enable_peer_access(self, peer: Any) -> None: ...  # this device may read and write peer's memory
    def memcpy_peer(self, dst: int, peer: Any, src: int, nbytes: int) -> None: ...  # src here to dst on peer, on this stream
    def host_alloc(self, nbytes: int) -> int: ...
    def host_free(self, ptr: int) -> None: ...
    def event_create(self) -> Any: ...
    def event_record(self, event: Any) -> None: ...
    def event_synchronize(self, event: Any) -> None: ...
    def event_elapsed_ms(self, start: Any, end: Any) -> float: ...
    def event_destroy(self, event: Any) -> None: ...
    def stream_wait_event(self, stream: int, event: Any) -> None: ...
    def synchronize(self) -> None: ...
    def module_load(self, code: bytes) -> Any: ...
    def module_function(self, module: Any, name: str) -> Any: ...
    # A launch of ``function`` with the block and shared memory bound: ``send(grid, params)``,
    # ``params`` the address of the array of pointers to each argument (the driver's kernelParams).
    def sender(self, function: Any, block: tuple[int, int, int],
               shared: int) -> Callable[[tuple[int, int, int], int], None]: ...


class Runtime(Protocol):
    """A ``gpu:N`` device as rocm_array's core and plugins use it."""

    platform: str
    properties: DeviceProperties
    driver: Driver
    compiler: Compiler

    # -- memory, in bytes at device addresses --
    def allocate(self, nbytes: int) -> DeviceBuffer: ...
    def release_memory(self) -> None: ...
    def memset(self, ptr: int, byte: int, nbytes: int) -> None: ...
    def memcpy(self, dst: int, src: int, nbytes: int) -> None: ...
    def upload(self, dst: int, src: np.ndarray) -> None: ...
    def download(self, dst: np.ndarray, src: int) -> None: ...
    # -- other GPUs of the process --
    def peer_route(self, peer: Any) -> Any: ...  # gpu.PeerRoute: a peer copy, or through the host, and why
    def copy_to_peer(self, peer: Any, dst: int, src: int, nbytes: int) -> None: ...
    # -- interchange --
    def dlpack_device(self) -> tuple[int, int]: ...
    def order_before(self, stream: Any) -> None: ...
    # -- kernels --
    def compile(self, path: str, names: Sequence[str], options: Sequence[str] = ()) -> Program: ...
    def load(self, program: Program) -> dict[str, Any]: ...
    def kernel(self, path: str, name: str, group: Sequence[str] = (), options: Sequence[str] = ()) -> Any: ...
    def prepare(self, kernels: Sequence[tuple[str, str, Sequence[str], Sequence[str]]]) -> None: ...
    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: Sequence[Any], shared: int = 0) -> None: ...
    def launcher(self, function: Any, argtypes: Sequence[Any], block: tuple[int, int, int],
                 shared: int = 0) -> Launcher: ...
    # -- ordering --
    def event(self) -> Any: ...  # gpu.Event: record(), synchronize(), elapsed_ms(end)
    def synchronize(self) -> None: ...
