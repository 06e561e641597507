"""The ``amd`` platform: ROCm through hip-python (``from hip import hip, hiprtc``).

Kept symmetric with ``nvidia.py``: the same classes (an Rtc, a Driver, ``count_devices``,
``open_devices``) with the same methods, each a thin wrapper over one binding
call. Only this module imports hip-python. Pointers and handles are passed to
hip-python as ints, which its Pointer adapters accept as addresses.
"""

from __future__ import annotations

import ctypes
import inspect
from typing import Any, Callable

from hip import hip, hiprtc

from .bindings import BindingsRtc, Current, checker, in_context, text
from .protocol import DeviceProperties, DriverError
from .targets import hiprtc_name, hiprtc_options

__all__ = ["HiprtcRtc", "AmdDriver", "count_devices", "open_devices"]

PLATFORM = "amd"
DLPACK_DEVICE_TYPE = 10  # kDLROCM
#: Bytes the device pool keeps after a synchronize instead of returning them to the driver.
RELEASE_THRESHOLD = 2**64 - 1
_POOL = hip.hipMemPoolAttr
#: Driver.memcpy's directions.
_MEMCPY = {"htod": hip.hipMemcpyHtoDAsync, "dtoh": hip.hipMemcpyDtoHAsync, "dtod": hip.hipMemcpyDtoDAsync}

#: The bytes of an IPC memory handle (hipIpcMemHandle_t).
IPC_HANDLE_SIZE = 64

_SUCCESS = hip.hipError_t.hipSuccess
#: hipDeviceEnablePeerAccess's answer when access was enabled before (by this runtime or another library).
_ALREADY_ENABLED = hip.hipError_t.hipErrorPeerAccessAlreadyEnabled
_LAUNCH = hip.hipModuleLaunchKernel
_check = checker(_SUCCESS, hip.hipError_t.hipErrorOutOfMemory, hip.hipGetErrorString)
_check_rtc = checker(hiprtc.hiprtcResult.HIPRTC_SUCCESS, None, hiprtc.hiprtcGetErrorString)


def _device_properties(index: int) -> Any:
    """hipGetDeviceProperties: hip-python 10 returns the struct; earlier versions fill one passed in."""
    if "prop" in inspect.signature(hip.hipGetDeviceProperties).parameters:
        props = hip.hipDeviceProp_t()
        _check(hip.hipGetDeviceProperties(props, index), "hipGetDeviceProperties")
        return props
    return _check(hip.hipGetDeviceProperties(index), "hipGetDeviceProperties")


class HiprtcRtc(BindingsRtc):
    """hiprtc, producing a code object for an offload architecture (``gfx90a:xnack-``)."""

    name = "hiprtc"
    api = hiprtc
    success = hiprtc.hiprtcResult.HIPRTC_SUCCESS
    code_kind = "Code"
    check = staticmethod(_check_rtc)
    options = staticmethod(hiprtc_options)
    spell = staticmethod(hiprtc_name)

    @staticmethod
    def handle(prog: Any) -> Any:
        return prog.createRef()  # hiprtcDestroyProgram takes a hiprtcProgram*


class AmdDriver:
    """One HIP device: a stream on it, and the device's default memory pool."""

    platform = PLATFORM
    dlpack_device_type = DLPACK_DEVICE_TYPE
    dlpack_default_stream = 0  # ROCm's default stream, as DLPack numbers it
    _current = Current()  # the device made current on each thread

    def __init__(self, index: int) -> None:
        self._index = index
        self.activate()
        props = _device_properties(index)
        full_arch = text(props.gcnArchName)  # "gfx90a:sramecc+:xnack-"
        if not int(_check(hip.hipDeviceGetAttribute(
                hip.hipDeviceAttribute_t.hipDeviceAttributeMemoryPoolsSupported, index),
                "hipDeviceGetAttribute")):
            raise DriverError(f"HIP device {index} has no stream-ordered memory pools")
        self.properties = DeviceProperties(
            platform=PLATFORM, index=index, name=text(props.name), arch=full_arch.split(":")[0],
            wave_size=int(props.warpSize), compute_units=int(props.multiProcessorCount),
            total_memory=int(props.totalGlobalMem), compile_arch=full_arch)
        self._stream = _check(hip.hipStreamCreate(), "hipStreamCreate")
        self.stream = int(self._stream)
        self._pool = _check(hip.hipDeviceGetDefaultMemPool(index), "hipDeviceGetDefaultMemPool")
        threshold = ctypes.c_uint64(RELEASE_THRESHOLD)
        _check(hip.hipMemPoolSetAttribute(self._pool, _POOL.hipMemPoolAttrReleaseThreshold,
                                          ctypes.addressof(threshold)), "hipMemPoolSetAttribute")

    def activate(self) -> None:
        if self._current.made != self._index:
            _check(hip.hipSetDevice(self._index), "hipSetDevice")
            self._current.made = self._index

    def rtc(self) -> HiprtcRtc:
        return HiprtcRtc()

    # -- memory --
    @in_context
    def malloc_async(self, nbytes: int) -> int:
        return int(_check(hip.hipMallocAsync(nbytes, self._stream), f"hipMallocAsync({nbytes})"))

    @in_context
    def free_async(self, ptr: int) -> None:
        _check(hip.hipFreeAsync(ptr, self._stream), "hipFreeAsync")

    def _pool_attribute(self, attr: Any) -> int:
        value = ctypes.c_uint64()
        _check(hip.hipMemPoolGetAttribute(self._pool, attr, ctypes.addressof(value)), "hipMemPoolGetAttribute")
        return int(value.value)

    def pool_usage(self) -> tuple[int, int]:
        return (self._pool_attribute(_POOL.hipMemPoolAttrUsedMemCurrent),
                self._pool_attribute(_POOL.hipMemPoolAttrReservedMemCurrent))

    @in_context
    def pool_trim(self, keep: int) -> None:
        _check(hip.hipMemPoolTrimTo(self._pool, keep), "hipMemPoolTrimTo")

    @in_context
    def memcpy(self, dst: int, src: int, nbytes: int, kind: str) -> None:
        call = _MEMCPY[kind]
        _check(call(dst, src, nbytes, self._stream), call.__name__)

    @in_context
    def memset_d8(self, ptr: int, value: int, nbytes: int) -> None:
        _check(hip.hipMemsetD8Async(ptr, value, nbytes, self._stream), "hipMemsetD8Async")

    # -- peers --
    def can_access_peer(self, peer: AmdDriver) -> bool:
        return bool(_check(hip.hipDeviceCanAccessPeer(self._index, peer._index), "hipDeviceCanAccessPeer"))

    @in_context
    def enable_peer_access(self, peer: AmdDriver) -> None:
        """This device may read and write ``peer``'s memory: the device's peer access (memory from
        other allocators, DLPack imports) and ``peer``'s pool, whose allocations follow the pool's
        own access list, not the device's (HIP's stream-ordered allocator, as CUDA's)."""
        status, = hip.hipDeviceEnablePeerAccess(peer._index, 0)
        if status != _ALREADY_ENABLED:
            _check((status,), "hipDeviceEnablePeerAccess")
        desc = hip.hipMemAccessDesc()
        desc.location.type = hip.hipMemLocationType.hipMemLocationTypeDevice
        desc.location.id = self._index
        desc.flags = hip.hipMemAccessFlags.hipMemAccessFlagsProtReadWrite
        _check(hip.hipMemPoolSetAccess(peer._pool, desc, 1), "hipMemPoolSetAccess")

    @in_context
    def memcpy_peer(self, dst: int, peer: AmdDriver, src: int, nbytes: int) -> None:
        _check(hip.hipMemcpyPeerAsync(dst, peer._index, src, self._index, nbytes, self._stream), "hipMemcpyPeerAsync")

    @in_context
    def host_alloc(self, nbytes: int) -> int:
        return int(_check(hip.hipHostMalloc(nbytes, 0), f"hipHostMalloc({nbytes})"))

    def host_free(self, ptr: int) -> None:
        _check(hip.hipHostFree(ptr), "hipHostFree")

    # -- memory another process maps (IPC): plain allocations, which the pool's are not --
    @in_context
    def ipc_alloc(self, nbytes: int) -> int:
        return int(_check(hip.hipMalloc(nbytes), f"hipMalloc({nbytes})"))

    @in_context
    def ipc_free(self, ptr: int) -> None:
        _check(hip.hipFree(ptr), "hipFree")

    @in_context
    def ipc_handle(self, ptr: int) -> bytes:
        handle = _check(hip.hipIpcGetMemHandle(ptr), "hipIpcGetMemHandle")
        return ctypes.string_at(handle.as_c_void_p().value, IPC_HANDLE_SIZE)

    @in_context
    def ipc_open(self, handle: bytes) -> int:
        found = hip.hipIpcMemHandle_t()
        ctypes.memmove(found.as_c_void_p().value, handle, IPC_HANDLE_SIZE)
        return int(_check(hip.hipIpcOpenMemHandle(found, hip.hipIpcMemLazyEnablePeerAccess), "hipIpcOpenMemHandle"))

    @in_context
    def ipc_close(self, ptr: int) -> None:
        _check(hip.hipIpcCloseMemHandle(ptr), "hipIpcCloseMemHandle")

    # -- ordering --
    @in_context
    def event_create(self) -> Any:
        return _check(hip.hipEventCreate(), "hipEventCreate")

    @in_context
    def event_record(self, event: Any) -> None:
        _check(hip.hipEventRecord(event, self._stream), "hipEventRecord")

    def event_synchronize(self, event: Any) -> None:
        _check(hip.hipEventSynchronize(event), "hipEventSynchronize")

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(_check(hip.hipEventElapsedTime(start, end), "hipEventElapsedTime"))

    def event_destroy(self, event: Any) -> None:
        _check(hip.hipEventDestroy(event), "hipEventDestroy")

    @in_context
    def stream_wait_event(self, stream: int, event: Any) -> None:
        _check(hip.hipStreamWaitEvent(stream, event, 0), "hipStreamWaitEvent")

    @in_context
    def synchronize(self) -> None:
        _check(hip.hipStreamSynchronize(self._stream), "hipStreamSynchronize")

    # -- kernels --
    @in_context
    def module_load(self, code: bytes) -> Any:
        return _check(hip.hipModuleLoadData(code), "hipModuleLoadData")

    def module_function(self, module: Any, name: str) -> Any:
        return _check(hip.hipModuleGetFunction(module, name.encode()), f"hipModuleGetFunction({name})")

    def sender(self, function: Any, block: tuple[int, int, int],
               shared: int) -> Callable[[tuple[int, int, int], int], None]:
        """``send(grid, params)``: launch ``function`` with everything else bound. The hot path of
        every op: one Python frame between the caller and the binding."""
        bx, by, bz = block
        stream, index, current, activate = self._stream, self._index, self._current, self.activate

        def send(grid: tuple[int, int, int], params: int) -> None:
            if current.made != index:
                activate()
            status, = _LAUNCH(function, grid[0], grid[1], grid[2], bx, by, bz, shared, stream, params, None)
            if status:  # hipError_t is an int enum; hipSuccess is 0
                _check((status,), "hipModuleLaunchKernel")

        return send


def count_devices() -> int:
    """How many HIP devices the driver reports; raises (ImportError, DriverError,
    OSError…) when ROCm is missing."""
    _check(hip.hipInit(0), "hipInit")
    return int(_check(hip.hipGetDeviceCount(), "hipGetDeviceCount"))


def open_devices() -> list[AmdDriver]:
    """Every HIP device."""
    return [AmdDriver(i) for i in range(count_devices())]
