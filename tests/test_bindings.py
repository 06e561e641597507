"""The platform modules against the bindings installed here, without a GPU.

Each platform module is imported with its bindings replaced by spies of the real ones
(``binding_spy``). Each public path is then driven: the driver, the run-time compiler,
the BLAS and solver routines for every dtype, and the FFT plans of every kind. Every
binding call must match what the installed version declares. The spies return answers;
nothing reaches a library or a device.

cuFFT is called through ctypes (``fft_nvidia``): its declarations are held to the installed
``cufft.h``, and its plans are driven through stand-ins that convert each argument as ctypes does.

CI runs this file in side environments, one per hip-python version (6.4, 7.2, and 10 with
``[libraries]``), and with cuda-bindings, nvmath-python and cuFFT's wheel. There,
``ROCM_ARRAY_REQUIRE_BINDINGS=amd`` (or ``nvidia``) turns a missing binding into a failure
rather than a skip.
"""

from __future__ import annotations

import ctypes
import glob
import importlib
import os
import re
import sys
import types
from pathlib import Path
from typing import Any, Iterator

import pytest

from binding_spy import HANDLE, CallRecord, Spy
from rocm_array import dtypes
from rocm_array.runtime.compiler import compile_program
from rocm_array.runtime import fft as fft_protocol

REQUIRED = set(filter(None, os.environ.get("ROCM_ARRAY_REQUIRE_BINDINGS", "").split(",")))


def _real(platform: str, package: str, *names: str) -> list[types.ModuleType]:
    """``from package import *names`` as the platform modules write it (hip-python 10's ``hip`` package
    re-exports its modules as attributes, so they are not importable as ``hip.hip``)."""
    try:
        found = importlib.import_module(package)
        return [getattr(found, n) for n in names]
    except (ImportError, AttributeError) as exc:
        if platform in REQUIRED:
            pytest.fail(f"ROCM_ARRAY_REQUIRE_BINDINGS names {platform}, but {package} lacks {names}: {exc}")
        pytest.skip(f"{platform} bindings not installed: {exc}")
        raise  # unreachable: skip raises


def _import_with(monkeypatch: pytest.MonkeyPatch, fakes: dict[str, types.ModuleType],
                 names: list[str]) -> list[types.ModuleType]:
    """Import ``names`` afresh while ``fakes`` stand in sys.modules; everything is put back after."""
    for name, module in fakes.items():
        monkeypatch.setitem(sys.modules, name, module)
    for name in names:
        parent, _, child = name.rpartition(".")
        monkeypatch.setitem(sys.modules, name, None)  # remembers the real entry, or its absence
        del sys.modules[name]
        monkeypatch.setattr(sys.modules[parent], child, None, raising=False)
    return [importlib.import_module(n) for n in names]


class SpyRuntime:
    """What a BLAS or FFT library uses of its GpuRuntime: the driver and the allocator."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.platform = driver.platform

    def allocate(self, nbytes: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(ptr=HANDLE, nbytes=nbytes)


def exercise_driver(module: types.ModuleType) -> Any:
    """Every Driver method, through ``open_devices``."""
    (drv,) = module.open_devices()
    assert drv.properties.index == 0
    drv.free_async(drv.malloc_async(256))
    for kind in ("htod", "dtoh", "dtod"):
        drv.memcpy(HANDLE, HANDLE, 16, kind)
    drv.memset_d8(HANDLE, 0, 16)
    drv.host_free(drv.host_alloc(64))
    start, end = drv.event_create(), drv.event_create()
    drv.event_record(start)
    drv.event_synchronize(start)
    assert drv.event_elapsed_ms(start, end) == 1.0
    drv.stream_wait_event(drv.stream, end)
    drv.event_destroy(start)
    drv.synchronize()
    drv.pool_usage()
    drv.pool_trim(0)
    peer = type(drv)(0)  # a second device: the spies answer for any ordinal
    assert drv.can_access_peer(peer) in (True, False)
    drv.enable_peer_access(peer)
    drv.memcpy_peer(HANDLE, peer, HANDLE, 16)
    function = drv.module_function(drv.module_load(b"\x7fELF" + bytes(60)), "kernel")
    params = (ctypes.c_void_p * 2)()
    drv.sender(function, (128, 1, 1), 0)((4, 1, 1), ctypes.addressof(params))
    return drv


def exercise_rtc(rtc: Any) -> None:
    """A compile through the project's own path, and the calls a failed compile makes."""
    assert rtc.version()
    code, lowered = compile_program(rtc, "template <class T> __global__ void k(T*) {}", "k.hip",
                                    ["k<float>", "k<int8_t>"], rtc.target_options("arch", 32), "spy")
    assert code and set(lowered) == {"k<float>", "k<int8_t>"}
    prog = rtc.create("", "k.hip", {})
    assert isinstance(rtc.log(prog), str)
    rtc.destroy(prog)


BLAS_DTYPES = [dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128]


def exercise_blas(blas: Any) -> None:
    for dt in [dtypes.float16, dtypes.bfloat16, *BLAS_DTYPES]:
        for batch in (1, 2):
            blas.gemm(dt, "N", "T", 4, 4, 4, HANDLE, 4, 16, HANDLE, 4, 16, HANDLE, 4, 16, batch)
    for dt in BLAS_DTYPES:
        blas.getrf(dt, 4, HANDLE, 4, HANDLE, HANDLE)
        blas.getrs(dt, 4, 2, HANDLE, 4, HANDLE, HANDLE, 4, HANDLE)
        for lower in (True, False):
            blas.potrf(dt, lower, 4, HANDLE, 4, HANDLE)
        blas.geqrf(dt, 6, 4, HANDLE, 6, HANDLE, HANDLE)
        blas.orgqr(dt, 6, 4, 4, HANDLE, 6, HANDLE, HANDLE)
        for vectors in (True, False):
            blas.syevd(dt, vectors, 4, HANDLE, 4, HANDLE, HANDLE)
        for job in ("N", "S"):
            blas.gesvd(dt, job, 6, 4, HANDLE, 6, HANDLE, HANDLE, 6, HANDLE, 4, HANDLE)
        if blas.has_geev:
            blas.geev(dt, 4, HANDLE, 4, HANDLE, HANDLE, 4, HANDLE)


def exercise_fft(fft: Any) -> None:
    for kind in fft_protocol.KINDS:
        for dt in (dtypes.complex64, dtypes.complex128):
            for lengths in [(8,), (4, 6), (2, 3, 4)]:
                fft.execute(kind, dt, lengths, 3, HANDLE, HANDLE, kind == "c2r")
    fft.execute("c2c", dtypes.complex64, (8,), 1, HANDLE, HANDLE, True)
    for plan, _ in list(fft._plans.values()):
        fft._destroy(plan)


# -- amd: hip-python -----------------------------------------------------------------------------

@pytest.fixture()
def amd(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[types.ModuleType], CallRecord, Any]]:
    hip, hiprtc, hipblas, hipsolver, hipfft = _real("amd", "hip", "hip", "hiprtc", "hipblas", "hipsolver", "hipfft")
    record = CallRecord()
    answers: dict[str, Any] = {
        "hipGetDeviceCount": 1, "hipDeviceGetAttribute": 1, "hipGetDeviceProperties": hip.hipDeviceProp_t(),
        "hipEventElapsedTime": 1.0, "hiprtcVersion": (6, 4),
        "hiprtcCreateProgram": lambda *a: hiprtc.hiprtcProgram.fromObj(HANDLE),
        "hiprtcGetProgramLogSize": 8, "hiprtcGetCodeSize": 64, "hiprtcGetLoweredName": b"_Z1kIfEvPT_",
        "hipfftMakePlanMany64": 0,
    }
    answers.update({n: 64 for n in dir(hipsolver) if n.endswith("_bufferSize")})
    package = types.ModuleType("hip")
    for real in (hip, hiprtc, hipblas, hipsolver, hipfft):
        setattr(package, real.__name__.rpartition(".")[2], Spy(real, "hip-python", answers, record))
    modules = _import_with(monkeypatch, {"hip": package}, ["rocm_array.runtime.amd", "rocm_array.runtime.blas_amd",
                                                           "rocm_array.runtime.fft_amd"])
    yield modules, record, package


def test_amd_driver_matches_hip_python(amd: Any) -> None:
    (platform, _, _), record, _ = amd
    exercise_driver(platform)
    names = record.names()
    assert {"hipInit", "hipGetDeviceProperties", "hipMallocAsync", "hipModuleLaunchKernel",
            "hipMemPoolTrimTo", "hipEventElapsedTime", "hipDeviceCanAccessPeer", "hipDeviceEnablePeerAccess",
            "hipMemPoolSetAccess", "hipMemcpyPeerAsync"} <= set(names)


def test_amd_rtc_matches_hip_python(amd: Any) -> None:
    (platform, _, _), record, _ = amd
    exercise_rtc(platform.HiprtcRtc())
    assert {"hiprtcCreateProgram", "hiprtcAddNameExpression", "hiprtcCompileProgram", "hiprtcGetCode",
            "hiprtcGetLoweredName", "hiprtcGetProgramLog", "hiprtcDestroyProgram"} <= set(record.names())


def test_amd_blas_matches_hip_python(amd: Any) -> None:
    (platform, blas_amd, _), record, _ = amd
    blas = blas_amd.open_library(SpyRuntime(platform.AmdDriver(0)))
    exercise_blas(blas)
    names = record.names()
    assert any(n.startswith("hipblasGemmStridedBatchedEx") for n in names)
    for routine in ("getrf", "getrs", "potrf", "geqrf", "orgqr", "ungqr", "syevd", "heevd", "gesvd"):
        assert f"hipsolverS{routine}" in names or f"hipsolverC{routine}" in names, routine


def test_amd_fft_matches_hip_python(amd: Any) -> None:
    (platform, _, fft_amd), record, _ = amd
    exercise_fft(fft_amd.open_library(SpyRuntime(platform.AmdDriver(0))))
    names = record.names()
    for call in ("hipfftMakePlanMany64", "hipfftExecC2C", "hipfftExecZ2D", "hipfftExecR2C", "hipfftDestroy"):
        assert call in names, call


def assert_refusals(driver: Any, prefix: str, bad_integer: Any) -> None:
    """The check itself: a missing name, a wrong argument count, a non-int C integer."""
    with pytest.raises(AttributeError):
        getattr(driver, f"{prefix}NoSuchCall")
    with pytest.raises(TypeError, match=f"{prefix}StreamSynchronize"):
        getattr(driver, f"{prefix}StreamSynchronize")(HANDLE, HANDLE)
    with pytest.raises(TypeError, match="C integer"):
        bad_integer()


def test_amd_spy_refuses_what_the_binding_would(amd: Any) -> None:
    _, _, package = amd
    assert_refusals(package.hip, "hip", lambda: package.hip.hipMallocAsync("256", HANDLE))
    with pytest.raises(TypeError, match="uplo"):
        package.hipsolver.hipsolverSpotrf(HANDLE, 1, 4, HANDLE, 4, HANDLE, 64, HANDLE)


# -- nvidia: cuda-bindings and nvmath-python --------------------------------------------------------

@pytest.fixture()
def nvidia(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[types.ModuleType], CallRecord, Any]]:
    cu, nvrtc = _real("nvidia", "cuda.bindings", "driver", "nvrtc")
    cublas, cusolver, cusolver_dn = _real("nvidia", "nvmath.bindings", "cublas", "cusolver", "cusolverDn")
    record = CallRecord()
    answers: dict[str, Any] = {
        "cuDeviceGetCount": 1, "cuDeviceGetAttribute": 1, "cuDeviceGetName": b"spy", "cuDeviceTotalMem": 2**30,
        "cuMemPoolGetAttribute": 0, "cuEventElapsedTime": 1.0, "nvrtcVersion": (12, 0),
        "nvrtcGetProgramLogSize": 8, "nvrtcGetCUBINSize": 64, "nvrtcGetLoweredName": b"_Z1kIfEvPT_",
    }
    answers.update({n: (64, 0) for n in dir(cusolver_dn) if n.startswith("x") and n.endswith("_buffer_size")})
    answers.update({f"{p}{r}_buffer_size": 64 for p in "sdcz" for r in ("orgqr", "ungqr")})
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = Spy(cu, "cuda-bindings", answers, record)
    bindings.nvrtc = Spy(nvrtc, "cuda-bindings", answers, record)
    nvmath_bindings = types.ModuleType("nvmath.bindings")
    for real in (cublas, cusolver, cusolver_dn):
        setattr(nvmath_bindings, real.__name__.rpartition(".")[2], Spy(real, "nvmath", answers, record))
    modules = _import_with(monkeypatch, {"cuda.bindings": bindings, "nvmath.bindings": nvmath_bindings},
                           ["rocm_array.runtime.nvidia", "rocm_array.runtime.blas_nvidia"])
    yield modules, record, bindings


def test_nvidia_driver_matches_cuda_bindings(nvidia: Any) -> None:
    (platform, _), record, _ = nvidia
    exercise_driver(platform)
    assert {"cuInit", "cuDevicePrimaryCtxRetain", "cuMemAllocAsync", "cuLaunchKernel",
            "cuMemPoolTrimTo", "cuDeviceCanAccessPeer", "cuCtxEnablePeerAccess", "cuMemPoolSetAccess",
            "cuMemcpyPeerAsync"} <= set(record.names())


def test_nvidia_rtc_matches_cuda_bindings(nvidia: Any) -> None:
    (platform, _), record, _ = nvidia
    exercise_rtc(platform.NvrtcRtc())
    assert {"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetCUBIN", "nvrtcGetLoweredName",
            "nvrtcDestroyProgram"} <= set(record.names())


def test_nvidia_blas_matches_nvmath(nvidia: Any) -> None:
    (platform, blas_nvidia), record, _ = nvidia
    exercise_blas(blas_nvidia.open_library(SpyRuntime(platform.NvidiaDriver(0))))
    names = record.names()
    for call in ("gemm_ex", "gemm_strided_batched_ex", "xgetrf", "xgetrs", "xpotrf", "xgeqrf", "sorgqr", "zungqr",
                 "xsyevd", "xgesvd", "create_gesvdj_info", "sgesvdj", "zgesvdj_buffer_size", "zgesvdj", "cgeam"):
        assert call in names, call


def test_nvidia_spy_refuses_what_the_binding_would(nvidia: Any) -> None:
    _, _, bindings = nvidia
    assert_refusals(bindings.driver, "cu", lambda: bindings.driver.cuMemsetD8Async(HANDLE, "0", 16, HANDLE))


# -- nvidia: cuFFT through ctypes, against the installed cufft.h --------------------------------------

def _cufft_header() -> str:
    """The installed ``cufft.h`` (the nvidia-cufft wheel's, which ``[nvidia]`` brings)."""
    for base in sys.path:
        found = sorted(glob.glob(os.path.join(glob.escape(base or "."), "nvidia", "*", "include", "cufft.h")))
        if found:
            return Path(found[0]).read_text()
    if "nvidia" in REQUIRED:
        pytest.fail("ROCM_ARRAY_REQUIRE_BINDINGS names nvidia, but no nvidia/*/include/cufft.h is on sys.path")
    pytest.skip("cuFFT's header is not installed (nvidia-cufft)")
    raise AssertionError  # unreachable: skip raises


#: cufft.h's parameter types as ctypes passes them (device pointers and streams are addresses).
_CTYPES = {"cufftHandle": ctypes.c_int, "int": ctypes.c_int, "cufftType": ctypes.c_int,
           "long long int": ctypes.c_longlong, "cudaStream_t": ctypes.c_void_p, "void *": ctypes.c_void_p,
           "cufftReal *": ctypes.c_void_p, "cufftDoubleReal *": ctypes.c_void_p, "cufftComplex *": ctypes.c_void_p,
           "cufftDoubleComplex *": ctypes.c_void_p, "cufftHandle *": ctypes.POINTER(ctypes.c_int),
           "int *": ctypes.POINTER(ctypes.c_int), "long long int *": ctypes.POINTER(ctypes.c_longlong),
           "size_t *": ctypes.POINTER(ctypes.c_size_t)}


def _enum(header: str, name: str) -> dict[str, int]:
    body = re.search(r"typedef enum %s\s*\{(.*?)\}" % name, header, re.S)
    assert body, name
    return {k: int(v, 0) for k, v in re.findall(r"(CUFFT_\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)", body.group(1))}


def test_cufft_declarations_are_cufft_hs() -> None:
    """Each call ``fft_nvidia`` declares has the header's parameters, and its status and type
    tables are the header's enums."""
    from rocm_array.runtime import fft_nvidia

    header = _cufft_header()
    declared = {name: [" ".join(p.replace("*", " * ").split()[:-1]) for p in params.split(",")]
                for name, params in re.findall(r"cufftResult CUFFTAPI (\w+)\s*\(([^)]*)\)", header)}
    for name, params in fft_nvidia.SIGNATURES.items():
        assert name in declared, f"{name} is not in cufft.h"
        assert [_CTYPES[t] for t in declared[name]] == list(params), (name, declared[name])
    assert _enum(header, "cufftResult_t") == {v: k for k, v in fft_nvidia.STATUS.items()}
    assert _enum(header, "cufftType_t") == fft_nvidia.TYPES


class _Function:
    """A stand-in for one ctypes function: converts each argument as ctypes would (``from_param``),
    records the call, and answers with the status ``answers`` gives (0), writing out-parameters."""

    def __init__(self, name: str, calls: list[str], answers: dict[str, int]) -> None:
        self.name, self.calls, self.answers = name, calls, answers
        self.argtypes: list[Any] = []
        self.restype: Any = None

    def __call__(self, *args: Any) -> int:
        assert len(args) == len(self.argtypes), f"{self.name}: {len(args)} arguments, declared {len(self.argtypes)}"
        for kind, arg in zip(self.argtypes, args):
            kind.from_param(arg)  # raises as the real call would
        self.calls.append(self.name)
        out = {"cufftCreate": (0, 7), "cufftMakePlanMany64": (-1, 4096)}.get(self.name)
        if out is not None:
            args[out[0]]._obj.value = out[1]
        return self.answers.get(self.name, 0)


class _Cufft:
    def __init__(self, answers: dict[str, int] | None = None) -> None:
        self.calls: list[str] = []
        self.answers = answers or {}

    def __getattr__(self, name: str) -> _Function:
        from rocm_array.runtime import fft_nvidia

        if name not in fft_nvidia.SIGNATURES:
            raise AttributeError(name)
        function = _Function(name, self.calls, self.answers)
        setattr(self, name, function)
        return function


def _cufft_runtime() -> SpyRuntime:
    return SpyRuntime(types.SimpleNamespace(platform="nvidia", stream=HANDLE, activate=lambda: None))


def test_nvidia_fft_makes_runs_and_frees_plans_through_its_declarations() -> None:
    from rocm_array.runtime import fft_nvidia

    library = _Cufft()
    exercise_fft(fft_nvidia.Cufft(_cufft_runtime(), library))  # type: ignore[arg-type]
    for call in ("cufftCreate", "cufftSetStream", "cufftSetAutoAllocation", "cufftMakePlanMany64",
                 "cufftSetWorkArea", "cufftExecC2C", "cufftExecZ2Z", "cufftExecR2C", "cufftExecD2Z", "cufftExecC2R",
                 "cufftExecZ2D", "cufftDestroy"):
        assert call in library.calls, call


def test_a_failed_cufft_call_names_the_call_and_status_and_frees_the_plan() -> None:
    from rocm_array.runtime import fft_nvidia
    from rocm_array.runtime.protocol import DriverError, DriverOutOfMemory

    for status, error, name in [(0x8, DriverError, "CUFFT_INVALID_SIZE"), (0x2, DriverOutOfMemory, "CUFFT_ALLOC_FAILED")]:
        library = _Cufft({"cufftMakePlanMany64": status})
        fft = fft_nvidia.Cufft(_cufft_runtime(), library)  # type: ignore[arg-type]
        with pytest.raises(error, match=f"cufftMakePlanMany64 failed: {name}"):
            fft.execute("c2c", dtypes.complex64, (8,), 1, HANDLE, HANDLE, False)
        assert library.calls[-1] == "cufftDestroy" and not fft._plans


def test_the_installed_cufft_opens_and_answers_its_version() -> None:
    """The real library file, opened as a first fft does (``libfiles.CUFFT``); its version needs no GPU."""
    from rocm_array.runtime import fft_nvidia

    _cufft_header()  # (skips, or fails under ROCM_ARRAY_REQUIRE_BINDINGS=nvidia, where cuFFT is missing)
    version = ctypes.c_int()
    assert fft_nvidia.open_cufft().cufftGetVersion(ctypes.byref(version)) == 0 and version.value >= 11000
