"""The ``nvidia`` platform: HIP's CUDA path, over cuda-bindings (driver API) and NVRTC.

Kept symmetric with ``amd.py``: the same classes (an Rtc, a Driver, ``count_devices`` and ``open_devices``)
with the same methods, each a thin wrapper over one binding call. Only this
module imports cuda-bindings.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Callable

from cuda.bindings import driver as cu
from cuda.bindings import nvrtc

from .bindings import BindingsRtc, Current, checker, in_context, text
from .protocol import DeviceProperties, DriverError
from .targets import NVRTC_MINIMAL_SINCE, nvrtc_options

__all__ = ["NvrtcRtc", "NvidiaDriver", "count_devices", "open_devices"]

PLATFORM = "nvidia"
DLPACK_DEVICE_TYPE = 2  # kDLCUDA
#: Bytes the device pool keeps after a synchronize instead of returning them to the driver.
RELEASE_THRESHOLD = 2**64 - 1
_ATTR = cu.CUdevice_attribute
_POOL = cu.CUmemPool_attribute

#: Driver.memcpy's directions.
_MEMCPY = {"htod": cu.cuMemcpyHtoDAsync, "dtoh": cu.cuMemcpyDtoHAsync, "dtod": cu.cuMemcpyDtoDAsync}

#: The bytes of an IPC memory handle (CUipcMemHandle).
IPC_HANDLE_SIZE = 64

_SUCCESS = cu.CUresult.CUDA_SUCCESS
#: cuCtxEnablePeerAccess's answer when access was enabled before (by this runtime or another library).
_ALREADY_ENABLED = cu.CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
_LAUNCH = cu.cuLaunchKernel
#: cuIpcOpenMemHandle maps another GPU's memory with peer access enabled as needed.
_IPC_LAZY_PEER = cu.CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
_check = checker(_SUCCESS, cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY, cu.cuGetErrorString)
_check_rtc = checker(nvrtc.nvrtcResult.NVRTC_SUCCESS, None, nvrtc.nvrtcGetErrorString)


class NvrtcRtc(BindingsRtc):
    """NVRTC, producing a cubin for a real architecture (``sm_90``). Needs no GPU."""

    name = "nvrtc"
    api = nvrtc
    success = nvrtc.nvrtcResult.NVRTC_SUCCESS
    code_kind = "CUBIN"
    check = staticmethod(_check_rtc)

    @staticmethod
    def buffer(size: int) -> bytes:
        return b" " * size  # cuda-bindings writes into a bytes object of the right size

    def target_options(self, arch: str, wave_size: int) -> list[str]:
        # (in place of ``options``: one of them depends on this NVRTC's version)
        return nvrtc_options(arch, wave_size, minimal=self._minimal)

    @functools.cached_property
    def _minimal(self) -> bool:
        """Whether this NVRTC has ``-minimal`` (asked once: a program's cache key reads the options)."""
        return tuple(self._call("Version")) >= NVRTC_MINIMAL_SINCE


class NvidiaDriver:
    """One CUDA device: its primary context, a stream, and the device's default memory pool."""

    platform = PLATFORM
    dlpack_device_type = DLPACK_DEVICE_TYPE
    dlpack_default_stream = 1  # CUDA's legacy default stream, as DLPack numbers it (2: per-thread)
    _current = Current()  # the context made current on each thread

    def __init__(self, index: int) -> None:
        self._device = _check(cu.cuDeviceGet(index), "cuDeviceGet")
        self._context = _check(cu.cuDevicePrimaryCtxRetain(self._device), "cuDevicePrimaryCtxRetain")
        self.activate()
        def attr(a: Any) -> int:
            return int(_check(cu.cuDeviceGetAttribute(a, self._device), "cuDeviceGetAttribute"))

        major = attr(_ATTR.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        minor = attr(_ATTR.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        if not attr(_ATTR.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED):
            raise DriverError(f"CUDA device {index} has no stream-ordered memory pools")
        self.properties = DeviceProperties(
            platform=PLATFORM, index=index, name=text(_check(cu.cuDeviceGetName(256, self._device), "cuDeviceGetName")),
            arch=f"sm_{major}{minor}", wave_size=attr(_ATTR.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            compute_units=attr(_ATTR.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            total_memory=int(_check(cu.cuDeviceTotalMem(self._device), "cuDeviceTotalMem")))
        # A blocking stream: ordered with the legacy default stream other libraries use.
        self._stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")
        self.stream = int(self._stream)
        self._pool = _check(cu.cuDeviceGetDefaultMemPool(self._device), "cuDeviceGetDefaultMemPool")
        _check(cu.cuMemPoolSetAttribute(self._pool, _POOL.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                        cu.cuuint64_t(RELEASE_THRESHOLD)), "cuMemPoolSetAttribute")

    def activate(self) -> None:
        if self._current.made is not self._context:
            _check(cu.cuCtxSetCurrent(self._context), "cuCtxSetCurrent")
            self._current.made = self._context

    def rtc(self) -> NvrtcRtc:
        return NvrtcRtc()

    # -- memory --
    @in_context
    def malloc_async(self, nbytes: int) -> int:
        return int(_check(cu.cuMemAllocAsync(nbytes, self.stream), f"cuMemAllocAsync({nbytes})"))

    @in_context
    def free_async(self, ptr: int) -> None:
        _check(cu.cuMemFreeAsync(ptr, self.stream), "cuMemFreeAsync")

    def _pool_attribute(self, attr: Any) -> int:
        return int(_check(cu.cuMemPoolGetAttribute(self._pool, attr), "cuMemPoolGetAttribute"))

    def pool_usage(self) -> tuple[int, int]:
        return (self._pool_attribute(_POOL.CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
                self._pool_attribute(_POOL.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT))

    @in_context
    def pool_trim(self, keep: int) -> None:
        _check(cu.cuMemPoolTrimTo(self._pool, keep), "cuMemPoolTrimTo")

    @in_context
    def memcpy(self, dst: int, src: int, nbytes: int, kind: str) -> None:
        call = _MEMCPY[kind]
        _check(call(dst, src, nbytes, self.stream), call.__name__)

    @in_context
    def memset_d8(self, ptr: int, value: int, nbytes: int) -> None:
        _check(cu.cuMemsetD8Async(ptr, value, nbytes, self.stream), "cuMemsetD8Async")

    # -- peers --
    def can_access_peer(self, peer: NvidiaDriver) -> bool:
        return bool(_check(cu.cuDeviceCanAccessPeer(self._device, peer._device), "cuDeviceCanAccessPeer"))

    @in_context
    def enable_peer_access(self, peer: NvidiaDriver) -> None:
        """This device may read and write ``peer``'s memory: its context's peer access (memory from
        other allocators, DLPack imports) and ``peer``'s pool, whose allocations follow the pool's
        own access list, not the context's (CUDA's stream-ordered allocator)."""
        status, = cu.cuCtxEnablePeerAccess(peer._context, 0)
        if status != _ALREADY_ENABLED:
            _check((status,), "cuCtxEnablePeerAccess")
        desc = cu.CUmemAccessDesc()
        desc.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        desc.location.id = self.properties.index
        desc.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        _check(cu.cuMemPoolSetAccess(peer._pool, [desc], 1), "cuMemPoolSetAccess")

    @in_context
    def memcpy_peer(self, dst: int, peer: NvidiaDriver, src: int, nbytes: int) -> None:
        _check(cu.cuMemcpyPeerAsync(dst, peer._context, src, self._context, nbytes, self.stream),
               "cuMemcpyPeerAsync")

    @in_context
    def host_alloc(self, nbytes: int) -> int:
        return int(_check(cu.cuMemHostAlloc(nbytes, 0), f"cuMemHostAlloc({nbytes})"))

    def host_free(self, ptr: int) -> None:
        _check(cu.cuMemFreeHost(ptr), "cuMemFreeHost")

    # -- memory another process maps (IPC): plain allocations, which the pool's are not --
    @in_context
    def ipc_alloc(self, nbytes: int) -> int:
        return int(_check(cu.cuMemAlloc(nbytes), f"cuMemAlloc({nbytes})"))

    @in_context
    def ipc_free(self, ptr: int) -> None:
        _check(cu.cuMemFree(ptr), "cuMemFree")

    @in_context
    def ipc_handle(self, ptr: int) -> bytes:
        handle = _check(cu.cuIpcGetMemHandle(ptr), "cuIpcGetMemHandle")
        return ctypes.string_at(handle.getPtr(), IPC_HANDLE_SIZE)

    @in_context
    def ipc_open(self, handle: bytes) -> int:
        found = cu.CUipcMemHandle()
        ctypes.memmove(found.getPtr(), handle, IPC_HANDLE_SIZE)
        return int(_check(cu.cuIpcOpenMemHandle(found, _IPC_LAZY_PEER), "cuIpcOpenMemHandle"))

    @in_context
    def ipc_close(self, ptr: int) -> None:
        _check(cu.cuIpcCloseMemHandle(ptr), "cuIpcCloseMemHandle")

    # -- ordering --
    @in_context
    def event_create(self) -> Any:
        return _check(cu.cuEventCreate(0), "cuEventCreate")

    @in_context
    def event_record(self, event: Any) -> None:
        _check(cu.cuEventRecord(event, self.stream), "cuEventRecord")

    def event_synchronize(self, event: Any) -> None:
        _check(cu.cuEventSynchronize(event), "cuEventSynchronize")

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(_check(cu.cuEventElapsedTime(start, end), "cuEventElapsedTime"))

    def event_destroy(self, event: Any) -> None:
        _check(cu.cuEventDestroy(event), "cuEventDestroy")

    @in_context
    def stream_wait_event(self, stream: int, event: Any) -> None:
        _check(cu.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent")

    @in_context
    def synchronize(self) -> None:
        _check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")

    # -- kernels --
    @in_context
    def module_load(self, code: bytes) -> Any:
        image = ctypes.create_string_buffer(code, len(code))
        return _check(cu.cuModuleLoadData(ctypes.addressof(image)), "cuModuleLoadData")

    def module_function(self, module: Any, name: str) -> Any:
        return _check(cu.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")

    def sender(self, function: Any, block: tuple[int, int, int],
               shared: int) -> Callable[[tuple[int, int, int], int], None]:
        """``send(grid, params)``: launch ``function`` with everything else bound. The hot path of
        every op: one Python frame between the caller and the binding."""
        bx, by, bz = block
        stream, context, current, activate = self._stream, self._context, self._current, self.activate

        def send(grid: tuple[int, int, int], params: int) -> None:
            if current.made is not context:
                activate()
            status, = _LAUNCH(function, grid[0], grid[1], grid[2], bx, by, bz, shared, stream, params, 0)
            if status:  # CUresult is an int enum; CUDA_SUCCESS is 0
                _check((status,), "cuLaunchKernel")

        return send


def count_devices() -> int:
    """How many CUDA devices the driver reports; raises (ImportError, DriverError,
    OSError…) when the driver is missing."""
    _check(cu.cuInit(0), "cuInit")
    return int(_check(cu.cuDeviceGetCount(), "cuDeviceGetCount"))


def open_devices() -> list[NvidiaDriver]:
    """Every CUDA device."""
    return [NvidiaDriver(i) for i in range(count_devices())]
