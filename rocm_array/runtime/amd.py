"""The ``amd`` platform: ROCm through hip-python (``from hip import hip, hiprtc``).

Kept symmetric with ``nvidia.py``: the same classes (an Rtc, a Driver,
``open_devices``) with the same methods, each a thin wrapper over one binding
call. Only this module imports hip-python. Pointers and handles are passed to
hip-python as ints, which its Pointer adapters accept as addresses.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any, Callable, Sequence

from hip import hip, hiprtc

from .protocol import DeviceProperties, DriverError, DriverOutOfMemory
from .targets import hiprtc_name, hiprtc_options

__all__ = ["HiprtcRtc", "AmdDriver", "open_devices"]

PLATFORM = "amd"
DLPACK_DEVICE_TYPE = 10  # kDLROCM
#: Bytes the device pool keeps after a synchronize instead of returning them to the driver.
RELEASE_THRESHOLD = 2**64 - 1
_POOL = hip.hipMemPoolAttr


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).split(b"\0")[0].decode(errors="replace")
    return str(value)


def _check(result: tuple[Any, ...], call: str) -> Any:
    err, *values = result
    if err != hip.hipError_t.hipSuccess:
        cls = DriverOutOfMemory if err == hip.hipError_t.hipErrorOutOfMemory else DriverError
        raise cls(f"{call} failed: {_text(hip.hipGetErrorName(err))}")
    return values[0] if len(values) == 1 else tuple(values)


def _in_context(method: Callable[..., Any]) -> Callable[..., Any]:
    """Make the device current on the calling thread first (finalizers run anywhere)."""
    @functools.wraps(method)
    def call(self: AmdDriver, *args: Any) -> Any:
        self.activate()
        return method(self, *args)
    return call


def _check_rtc(result: tuple[Any, ...], call: str) -> Any:
    err, *values = result
    if err != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        raise DriverError(f"{call} failed: {_text(hiprtc.hiprtcGetErrorString(err))}")
    return values[0] if len(values) == 1 else tuple(values)


class HiprtcRtc:
    """hiprtc, producing a code object for an offload architecture (``gfx90a:xnack-``)."""

    name = "hiprtc"

    def version(self) -> str:
        major, minor = _check_rtc(hiprtc.hiprtcVersion(), "hiprtcVersion")
        return f"{major}.{minor}"

    def target_options(self, arch: str, wave_size: int) -> list[str]:
        return hiprtc_options(arch, wave_size)

    def create(self, source: str, filename: str, headers: dict[str, str]) -> Any:
        return _check_rtc(hiprtc.hiprtcCreateProgram(
            source.encode(), filename.encode(), len(headers),
            [h.encode() for h in headers.values()], [n.encode() for n in headers]), "hiprtcCreateProgram")

    def add_name(self, prog: Any, expr: str) -> None:
        _check_rtc(hiprtc.hiprtcAddNameExpression(prog, hiprtc_name(expr).encode()), "hiprtcAddNameExpression")

    def compile(self, prog: Any, options: list[str]) -> bool:
        (err,) = hiprtc.hiprtcCompileProgram(prog, len(options), [o.encode() for o in options])
        return err == hiprtc.hiprtcResult.HIPRTC_SUCCESS

    def log(self, prog: Any) -> str:
        size = _check_rtc(hiprtc.hiprtcGetProgramLogSize(prog), "hiprtcGetProgramLogSize")
        buf = bytearray(size)
        _check_rtc(hiprtc.hiprtcGetProgramLog(prog, buf), "hiprtcGetProgramLog")
        return _text(buf)

    def lowered(self, prog: Any, expr: str) -> str:
        return _text(_check_rtc(hiprtc.hiprtcGetLoweredName(prog, hiprtc_name(expr).encode()), "hiprtcGetLoweredName"))

    def code(self, prog: Any) -> bytes:
        size = _check_rtc(hiprtc.hiprtcGetCodeSize(prog), "hiprtcGetCodeSize")
        buf = bytearray(size)
        _check_rtc(hiprtc.hiprtcGetCode(prog, buf), "hiprtcGetCode")
        return bytes(buf)

    def destroy(self, prog: Any) -> None:
        hiprtc.hiprtcDestroyProgram(prog)


class AmdDriver:
    """One HIP device: a stream on it, and the device's default memory pool."""

    platform = PLATFORM
    dlpack_device_type = DLPACK_DEVICE_TYPE
    _current = threading.local()  # the device made current on each thread

    def __init__(self, index: int) -> None:
        self._index = index
        self.activate()
        props = hip.hipDeviceProp_t()
        _check(hip.hipGetDeviceProperties(props, index), "hipGetDeviceProperties")
        full_arch = _text(props.gcnArchName)  # "gfx90a:sramecc+:xnack-"
        if not int(_check(hip.hipDeviceGetAttribute(
                hip.hipDeviceAttribute_t.hipDeviceAttributeMemoryPoolsSupported, index),
                "hipDeviceGetAttribute")):
            raise DriverError(f"HIP device {index} has no stream-ordered memory pools")
        self.properties = DeviceProperties(
            platform=PLATFORM, index=index, name=_text(props.name), arch=full_arch.split(":")[0],
            wave_size=int(props.warpSize), compute_units=int(props.multiProcessorCount),
            total_memory=int(props.totalGlobalMem), compile_arch=full_arch)
        self._stream = _check(hip.hipStreamCreate(), "hipStreamCreate")
        self.stream = int(self._stream)
        self._pool = _check(hip.hipDeviceGetDefaultMemPool(index), "hipDeviceGetDefaultMemPool")
        threshold = ctypes.c_uint64(RELEASE_THRESHOLD)
        _check(hip.hipMemPoolSetAttribute(self._pool, _POOL.hipMemPoolAttrReleaseThreshold,
                                          ctypes.addressof(threshold)), "hipMemPoolSetAttribute")

    def activate(self) -> None:
        if getattr(self._current, "device", None) != self._index:
            _check(hip.hipSetDevice(self._index), "hipSetDevice")
            self._current.device = self._index

    def rtc(self) -> HiprtcRtc:
        return HiprtcRtc()

    # -- memory --
    @_in_context
    def malloc_async(self, nbytes: int) -> int:
        return int(_check(hip.hipMallocAsync(nbytes, self._stream), f"hipMallocAsync({nbytes})"))

    @_in_context
    def free_async(self, ptr: int) -> None:
        _check(hip.hipFreeAsync(ptr, self._stream), "hipFreeAsync")

    def _pool_attribute(self, attr: Any) -> int:
        value = ctypes.c_uint64()
        _check(hip.hipMemPoolGetAttribute(self._pool, attr, ctypes.addressof(value)), "hipMemPoolGetAttribute")
        return int(value.value)

    def pool_usage(self) -> tuple[int, int]:
        return (self._pool_attribute(_POOL.hipMemPoolAttrUsedMemCurrent),
                self._pool_attribute(_POOL.hipMemPoolAttrReservedMemCurrent))

    @_in_context
    def pool_trim(self, keep: int) -> None:
        _check(hip.hipMemPoolTrimTo(self._pool, keep), "hipMemPoolTrimTo")

    @_in_context
    def memcpy_htod(self, dst: int, src: int, nbytes: int) -> None:
        _check(hip.hipMemcpyHtoDAsync(dst, src, nbytes, self._stream), "hipMemcpyHtoDAsync")

    @_in_context
    def memcpy_dtoh(self, dst: int, src: int, nbytes: int) -> None:
        _check(hip.hipMemcpyDtoHAsync(dst, src, nbytes, self._stream), "hipMemcpyDtoHAsync")

    @_in_context
    def memcpy_dtod(self, dst: int, src: int, nbytes: int) -> None:
        _check(hip.hipMemcpyDtoDAsync(dst, src, nbytes, self._stream), "hipMemcpyDtoDAsync")

    @_in_context
    def memset_d8(self, ptr: int, value: int, nbytes: int) -> None:
        _check(hip.hipMemsetD8Async(ptr, value, nbytes, self._stream), "hipMemsetD8Async")

    @_in_context
    def host_alloc(self, nbytes: int) -> int:
        return int(_check(hip.hipHostMalloc(nbytes, 0), f"hipHostMalloc({nbytes})"))

    def host_free(self, ptr: int) -> None:
        _check(hip.hipHostFree(ptr), "hipHostFree")

    # -- ordering --
    @_in_context
    def event_create(self) -> Any:
        return _check(hip.hipEventCreate(), "hipEventCreate")

    @_in_context
    def event_record(self, event: Any) -> None:
        _check(hip.hipEventRecord(event, self._stream), "hipEventRecord")

    def event_synchronize(self, event: Any) -> None:
        _check(hip.hipEventSynchronize(event), "hipEventSynchronize")

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(_check(hip.hipEventElapsedTime(start, end), "hipEventElapsedTime"))

    def event_destroy(self, event: Any) -> None:
        _check(hip.hipEventDestroy(event), "hipEventDestroy")

    @_in_context
    def stream_wait_event(self, stream: int, event: Any) -> None:
        _check(hip.hipStreamWaitEvent(stream, event, 0), "hipStreamWaitEvent")

    @_in_context
    def synchronize(self) -> None:
        _check(hip.hipStreamSynchronize(self._stream), "hipStreamSynchronize")

    # -- kernels --
    @_in_context
    def module_load(self, code: bytes) -> Any:
        return _check(hip.hipModuleLoadData(code), "hipModuleLoadData")

    def module_function(self, module: Any, name: str) -> Any:
        return _check(hip.hipModuleGetFunction(module, name.encode()), f"hipModuleGetFunction({name})")

    @_in_context
    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared: int, args: Sequence[ctypes._SimpleCData | ctypes.Structure]) -> None:
        # hip-python packs the ctypes values into the `extra` buffer with each one's alignment.
        _check(hip.hipModuleLaunchKernel(function, *grid, *block, sharedMemBytes=shared,
                                         stream=self._stream, kernelParams=None, extra=tuple(args)),
               "hipModuleLaunchKernel")


def open_devices() -> list[AmdDriver]:
    """Every HIP device; raises (ImportError, DriverError, OSError…) when ROCm is missing."""
    _check(hip.hipInit(0), "hipInit")
    return [AmdDriver(i) for i in range(int(_check(hip.hipGetDeviceCount(), "hipGetDeviceCount")))]
