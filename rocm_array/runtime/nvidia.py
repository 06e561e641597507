"""The ``nvidia`` platform: HIP's CUDA path, over cuda-bindings (driver API) and NVRTC.

Kept symmetric with ``amd.py``: the same classes (an Rtc, a Driver, ``open_devices``)
with the same methods, each a thin wrapper over one binding call. Only this
module imports cuda-bindings.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any, Callable, Sequence

from cuda.bindings import driver as cu
from cuda.bindings import nvrtc

from .protocol import DeviceProperties, DriverError, DriverOutOfMemory
from .targets import nvrtc_options

__all__ = ["NvrtcRtc", "NvidiaDriver", "open_devices"]

PLATFORM = "nvidia"
DLPACK_DEVICE_TYPE = 2  # kDLCUDA
#: Bytes the device pool keeps after a synchronize instead of returning them to the driver.
RELEASE_THRESHOLD = 2**64 - 1
_ATTR = cu.CUdevice_attribute
_POOL = cu.CUmemPool_attribute


def _check(result: tuple[Any, ...], call: str) -> Any:
    err, *values = result
    if err != cu.CUresult.CUDA_SUCCESS:
        name = cu.cuGetErrorName(err)[1]
        text = name.decode() if isinstance(name, bytes) else str(err)
        cls = DriverOutOfMemory if err == cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY else DriverError
        raise cls(f"{call} failed: {text}")
    return values[0] if len(values) == 1 else tuple(values)


def _in_context(method: Callable[..., Any]) -> Callable[..., Any]:
    """Make the device's context current on the calling thread first (finalizers run anywhere)."""
    @functools.wraps(method)
    def call(self: NvidiaDriver, *args: Any) -> Any:
        self.activate()
        return method(self, *args)
    return call


def _check_rtc(result: tuple[Any, ...], call: str) -> Any:
    err, *values = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise DriverError(f"{call} failed: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
    return values[0] if len(values) == 1 else tuple(values)


class NvrtcRtc:
    """NVRTC, producing a cubin for a real architecture (``sm_90``). Needs no GPU."""

    name = "nvrtc"

    def version(self) -> str:
        major, minor = _check_rtc(nvrtc.nvrtcVersion(), "nvrtcVersion")
        return f"{major}.{minor}"

    def target_options(self, arch: str, wave_size: int) -> list[str]:
        return nvrtc_options(arch, wave_size)

    def create(self, source: str, filename: str, headers: dict[str, str]) -> Any:
        return _check_rtc(nvrtc.nvrtcCreateProgram(
            source.encode(), filename.encode(), len(headers),
            [h.encode() for h in headers.values()], [n.encode() for n in headers]), "nvrtcCreateProgram")

    def add_name(self, prog: Any, expr: str) -> None:
        _check_rtc(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), "nvrtcAddNameExpression")

    def compile(self, prog: Any, options: list[str]) -> bool:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        return err == nvrtc.nvrtcResult.NVRTC_SUCCESS

    def log(self, prog: Any) -> str:
        size = _check_rtc(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        buf = b" " * size
        _check_rtc(nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        return buf.rstrip(b"\0").decode(errors="replace")

    def lowered(self, prog: Any, expr: str) -> str:
        name = _check_rtc(nvrtc.nvrtcGetLoweredName(prog, expr.encode()), "nvrtcGetLoweredName")
        return name.decode() if isinstance(name, bytes) else str(name)

    def code(self, prog: Any) -> bytes:
        size = _check_rtc(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        buf = b" " * size
        _check_rtc(nvrtc.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
        return buf

    def destroy(self, prog: Any) -> None:
        nvrtc.nvrtcDestroyProgram(prog)


class NvidiaDriver:
    """One CUDA device: its primary context, a stream, and the device's default memory pool."""

    platform = PLATFORM
    dlpack_device_type = DLPACK_DEVICE_TYPE
    _current = threading.local()  # the context made current on each thread

    def __init__(self, index: int) -> None:
        self._device = _check(cu.cuDeviceGet(index), "cuDeviceGet")
        self._context = _check(cu.cuDevicePrimaryCtxRetain(self._device), "cuDevicePrimaryCtxRetain")
        self.activate()
        attr = lambda a: int(_check(cu.cuDeviceGetAttribute(a, self._device), "cuDeviceGetAttribute"))  # noqa: E731
        major = attr(_ATTR.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        minor = attr(_ATTR.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        if not attr(_ATTR.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED):
            raise DriverError(f"CUDA device {index} has no stream-ordered memory pools")
        name = _check(cu.cuDeviceGetName(256, self._device), "cuDeviceGetName")
        self.properties = DeviceProperties(
            platform=PLATFORM, index=index, name=name.split(b"\0")[0].decode(),
            arch=f"sm_{major}{minor}", wave_size=attr(_ATTR.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            compute_units=attr(_ATTR.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            total_memory=int(_check(cu.cuDeviceTotalMem(self._device), "cuDeviceTotalMem")))
        # A blocking stream: ordered with the legacy default stream other libraries use.
        self.stream = int(_check(cu.cuStreamCreate(0), "cuStreamCreate"))
        self._pool = _check(cu.cuDeviceGetDefaultMemPool(self._device), "cuDeviceGetDefaultMemPool")
        _check(cu.cuMemPoolSetAttribute(self._pool, _POOL.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                        cu.cuuint64_t(RELEASE_THRESHOLD)), "cuMemPoolSetAttribute")

    def activate(self) -> None:
        if getattr(self._current, "context", None) is not self._context:
            _check(cu.cuCtxSetCurrent(self._context), "cuCtxSetCurrent")
            self._current.context = self._context

    def rtc(self) -> NvrtcRtc:
        return NvrtcRtc()

    # -- memory --
    @_in_context
    def malloc_async(self, nbytes: int) -> int:
        return int(_check(cu.cuMemAllocAsync(nbytes, self.stream), f"cuMemAllocAsync({nbytes})"))

    @_in_context
    def free_async(self, ptr: int) -> None:
        _check(cu.cuMemFreeAsync(ptr, self.stream), "cuMemFreeAsync")

    def pool_usage(self) -> tuple[int, int]:
        used = _check(cu.cuMemPoolGetAttribute(self._pool, _POOL.CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
                      "cuMemPoolGetAttribute")
        held = _check(cu.cuMemPoolGetAttribute(self._pool, _POOL.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
                      "cuMemPoolGetAttribute")
        return int(used), int(held)

    @_in_context
    def pool_trim(self, keep: int) -> None:
        _check(cu.cuMemPoolTrimTo(self._pool, keep), "cuMemPoolTrimTo")

    @_in_context
    def memcpy_htod(self, dst: int, src: int, nbytes: int) -> None:
        _check(cu.cuMemcpyHtoDAsync(dst, src, nbytes, self.stream), "cuMemcpyHtoDAsync")

    @_in_context
    def memcpy_dtoh(self, dst: int, src: int, nbytes: int) -> None:
        _check(cu.cuMemcpyDtoHAsync(dst, src, nbytes, self.stream), "cuMemcpyDtoHAsync")

    @_in_context
    def memcpy_dtod(self, dst: int, src: int, nbytes: int) -> None:
        _check(cu.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream), "cuMemcpyDtoDAsync")

    @_in_context
    def memset_d8(self, ptr: int, value: int, nbytes: int) -> None:
        _check(cu.cuMemsetD8Async(ptr, value, nbytes, self.stream), "cuMemsetD8Async")

    @_in_context
    def host_alloc(self, nbytes: int) -> int:
        return int(_check(cu.cuMemHostAlloc(nbytes, 0), f"cuMemHostAlloc({nbytes})"))

    def host_free(self, ptr: int) -> None:
        _check(cu.cuMemFreeHost(ptr), "cuMemFreeHost")

    # -- ordering --
    @_in_context
    def event_create(self) -> Any:
        return _check(cu.cuEventCreate(0), "cuEventCreate")

    @_in_context
    def event_record(self, event: Any) -> None:
        _check(cu.cuEventRecord(event, self.stream), "cuEventRecord")

    def event_synchronize(self, event: Any) -> None:
        _check(cu.cuEventSynchronize(event), "cuEventSynchronize")

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(_check(cu.cuEventElapsedTime(start, end), "cuEventElapsedTime"))

    def event_destroy(self, event: Any) -> None:
        _check(cu.cuEventDestroy(event), "cuEventDestroy")

    @_in_context
    def stream_wait_event(self, stream: int, event: Any) -> None:
        _check(cu.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent")

    @_in_context
    def synchronize(self) -> None:
        _check(cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")

    # -- kernels --
    @_in_context
    def module_load(self, code: bytes) -> Any:
        image = ctypes.create_string_buffer(code, len(code))
        return _check(cu.cuModuleLoadData(ctypes.addressof(image)), "cuModuleLoadData")

    def module_function(self, module: Any, name: str) -> Any:
        return _check(cu.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")

    @_in_context
    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared: int, args: Sequence[ctypes._SimpleCData | ctypes.Structure]) -> None:
        # kernelParams: an array of pointers to each argument; the driver reads sizes from the image.
        params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        _check(cu.cuLaunchKernel(function, *grid, *block, shared, self.stream,
                                 ctypes.addressof(params), 0), "cuLaunchKernel")


def open_devices() -> list[NvidiaDriver]:
    """Every CUDA device; raises (ImportError, DriverError, OSError…) when the driver is missing."""
    _check(cu.cuInit(0), "cuInit")
    return [NvidiaDriver(i) for i in range(int(_check(cu.cuDeviceGetCount(), "cuDeviceGetCount")))]
