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
    ptr = drv.ipc_alloc(256)
    handle = drv.ipc_handle(ptr)
    assert isinstance(handle, bytes) and len(handle) == 64
    drv.ipc_close(drv.ipc_open(handle))
    drv.ipc_free(ptr)
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
        "hipfftMakePlanMany64": 0, "hipIpcGetMemHandle": hip.hipIpcMemHandle_t(),
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
            "hipMemPoolSetAccess", "hipMemcpyPeerAsync", "hipMalloc", "hipIpcGetMemHandle", "hipIpcOpenMemHandle",
            "hipIpcCloseMemHandle", "hipFree"} <= set(names)


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
        "cuIpcGetMemHandle": cu.CUipcMemHandle(),
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
            "cuMemcpyPeerAsync", "cuMemAlloc", "cuIpcGetMemHandle", "cuIpcOpenMemHandle", "cuIpcCloseMemHandle",
            "cuMemFree"} <= set(record.names())


def test_nvidia_rtc_matches_cuda_bindings(nvidia: Any) -> None:
    (platform, _), record, _ = nvidia
    exercise_rtc(platform.NvrtcRtc())
    assert {"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetCUBIN", "nvrtcGetLoweredName",
            "nvrtcDestroyProgram"} <= set(record.names())


def test_nvrtc_leaves_the_cuda_runtime_out_of_programs_where_it_can(nvidia: Any) -> None:
    """``-minimal`` (``targets.NVRTC_MINIMAL_SINCE``): from NVRTC 12.4 on, not before (the spy's is 12.0)."""
    (platform, _), _, _ = nvidia
    assert "-minimal" not in platform.NvrtcRtc().target_options("sm_90", 32)
    rtc = platform.NvrtcRtc()
    rtc._call = lambda fn, *args: (12, 4)  # (its version: the only call target_options makes)
    assert rtc.target_options("sm_90", 32)[-1] == "-minimal"


def test_nvidia_spy_refuses_what_the_binding_would(nvidia: Any) -> None:
    _, _, bindings = nvidia
    assert_refusals(bindings.driver, "cu", lambda: bindings.driver.cuMemsetD8Async(HANDLE, "0", 16, HANDLE))


# -- nvidia: cuBLAS and cuFFT through ctypes, against the installed headers -----------------------------

def _header(name: str) -> str:
    """The installed ``name`` (the nvidia-cublas and nvidia-cufft wheels', which ``[nvidia]`` brings)."""
    for base in sys.path:
        found = sorted(glob.glob(os.path.join(glob.escape(base or "."), "nvidia", "*", "include", name)))
        if found:
            return Path(found[0]).read_text()
    if "nvidia" in REQUIRED:
        pytest.fail(f"ROCM_ARRAY_REQUIRE_BINDINGS names nvidia, but no nvidia/*/include/{name} is on sys.path")
    pytest.skip(f"{name} is not installed")
    raise AssertionError  # unreachable: skip raises


_P = ctypes.c_void_p
#: The headers' parameter types as ctypes passes them ("const" dropped): handles, streams and
#: device pointers are addresses, enums ints.
_CTYPES = {"cufftHandle": ctypes.c_int, "int": ctypes.c_int, "cufftType": ctypes.c_int,
           "long long int": ctypes.c_longlong, "size_t": ctypes.c_size_t, "cudaStream_t": _P, "void *": _P,
           "cufftReal *": _P, "cufftDoubleReal *": _P, "cufftComplex *": _P, "cufftDoubleComplex *": _P,
           "float *": _P, "double *": _P, "cuComplex *": _P, "cuDoubleComplex *": _P, "cublasHandle_t": _P,
           "cublasOperation_t": ctypes.c_int, "cudaDataType": ctypes.c_int, "cublasComputeType_t": ctypes.c_int,
           "cublasGemmAlgo_t": ctypes.c_int, "cufftHandle *": ctypes.POINTER(ctypes.c_int),
           "int *": ctypes.POINTER(ctypes.c_int), "long long int *": ctypes.POINTER(ctypes.c_longlong),
           "size_t *": ctypes.POINTER(ctypes.c_size_t), "cublasHandle_t *": ctypes.POINTER(_P)}


def _declarations(header: str, returns: str) -> dict[str, list[str]]:
    """Each function of ``header`` returning ``returns``: its parameters' types, as _CTYPES spells them."""
    found = {}
    for name, params in re.findall(r"%s \w+ (\w+)\s*\(([^)]*)\);" % returns, header):
        found[name] = [" ".join(p.replace("const ", " ").replace("*", " * ").split()[:-1]) for p in params.split(",")]
    return found


def _enums(header: str) -> dict[str, dict[str, int]]:
    """Each ``typedef enum`` of ``header``, by its tag and by its name: its constants' values."""
    found = {}
    for tag, body, name in re.findall(r"typedef enum (\w*)\s*\{(.*?)\}\s*(\w*)\s*;", header, re.S):
        values = {k: int(v, 0) for k, v in re.findall(r"(\w+)\s*=\s*(-?0x[0-9A-Fa-f]+|-?\d+)", body)}
        found.update({n: values for n in (tag, name) if n})
    return found


def _assert_declared(header: str, returns: str, signatures: dict[str, tuple[Any, ...]]) -> None:
    declared = _declarations(header, returns)
    for name, params in signatures.items():
        assert name in declared, f"{name} is not in the header"
        assert [_CTYPES[t] for t in declared[name]] == list(params), (name, declared[name])


def test_cufft_declarations_are_cufft_hs() -> None:
    """Each call ``fft_nvidia`` declares has the header's parameters, and its status and type
    tables are the header's enums."""
    from rocm_array.runtime import fft_nvidia

    header = _header("cufft.h")
    _assert_declared(header, "cufftResult", fft_nvidia.SIGNATURES)
    enums = _enums(header)
    assert enums["cufftResult_t"] == {v: k for k, v in fft_nvidia.STATUS.items()}
    assert enums["cufftType_t"] == fft_nvidia.TYPES


def test_cublas_declarations_are_cublas_api_hs() -> None:
    """Each cuBLAS call ``blas_nvidia`` declares has the header's parameters; its enum values are the
    header's, and its data and eigen-mode values nvmath's (the cuSOLVER binding it passes them to)."""
    from rocm_array.runtime import blas_nvidia as b

    header = _header("cublas_api.h")
    _assert_declared(header, "cublasStatus_t", b.SIGNATURES)
    enums = _enums(header)
    assert enums["cublasStatus_t"] == {v: k for k, v in b.STATUS.items()}
    assert {f"CUBLAS_OP_{k}": v for k, v in b.OPERATIONS.items()}.items() <= enums["cublasOperation_t"].items()
    assert b.COMPUTE.items() <= enums["cublasComputeType_t"].items()
    assert enums["cublasGemmAlgo_t"]["CUBLAS_GEMM_DEFAULT"] == b.GEMM_DEFAULT
    assert enums["cublasFillMode_t"]["CUBLAS_FILL_MODE_LOWER"] == b._LOWER
    assert enums["cublasFillMode_t"]["CUBLAS_FILL_MODE_UPPER"] == b._UPPER
    (utils,) = _real("nvidia", "nvmath", "_utils")
    names = {"float16": "CUDA_R_16F", "bfloat16": "CUDA_R_16BF", "float32": "CUDA_R_32F", "float64": "CUDA_R_64F",
             "complex64": "CUDA_C_32F", "complex128": "CUDA_C_64F"}
    assert {k: int(getattr(utils.CudaDataType, v)) for k, v in names.items()} == b.DATA_TYPES
    eig = importlib.import_module("nvmath.bindings.cusolver").EigMode
    assert (int(eig.NOVECTOR), int(eig.VECTOR)) == (b._NOVECTOR, b._VECTOR)


class _Function:
    """A stand-in for one ctypes function: converts each argument as ctypes would (``from_param``),
    records the call, and answers with the status ``answers`` gives (0), writing out-parameters."""

    #: call -> (its out-parameter's position, the value written).
    OUT = {"cufftCreate": (0, 7), "cufftMakePlanMany64": (-1, 4096), "cublasCreate_v2": (0, 0x2000)}

    def __init__(self, name: str, calls: list[str], answers: dict[str, int]) -> None:
        self.name, self.calls, self.answers = name, calls, answers
        self.argtypes: list[Any] = []
        self.restype: Any = None

    def __call__(self, *args: Any) -> int:
        assert len(args) == len(self.argtypes), f"{self.name}: {len(args)} arguments, declared {len(self.argtypes)}"
        for kind, arg in zip(self.argtypes, args):
            kind.from_param(arg)  # raises as the real call would
        self.calls.append(self.name)
        if self.name in self.OUT:
            at, value = self.OUT[self.name]
            args[at]._obj.value = value
        return self.answers.get(self.name, 0)


class _Library:
    """A stand-in for a ``ctypes.CDLL`` that has exactly the calls of ``signatures``."""

    def __init__(self, signatures: dict[str, Any], answers: dict[str, int] | None = None) -> None:
        self.signatures = signatures
        self.calls: list[str] = []
        self.answers = answers or {}

    def __getattr__(self, name: str) -> _Function:
        if name not in self.__dict__.get("signatures", {}):
            raise AttributeError(name)
        function = _Function(name, self.calls, self.answers)
        setattr(self, name, function)
        return function


def _ctypes_runtime() -> SpyRuntime:
    return SpyRuntime(types.SimpleNamespace(platform="nvidia", stream=HANDLE, activate=lambda: None))


def test_nvidia_fft_makes_runs_and_frees_plans_through_its_declarations() -> None:
    from rocm_array.runtime import fft_nvidia

    library = _Library(fft_nvidia.SIGNATURES)
    exercise_fft(fft_nvidia.Cufft(_ctypes_runtime(), library))  # type: ignore[arg-type]
    assert set(library.calls) == set(fft_nvidia.SIGNATURES) - {"cufftGetVersion"}


def test_nvidia_blas_calls_cublas_through_its_declarations_and_cusolver_through_nvmath(nvidia: Any) -> None:
    (_, blas_nvidia), record, _ = nvidia
    library = _Library(blas_nvidia.SIGNATURES)
    exercise_blas(blas_nvidia.NvidiaBlas(_ctypes_runtime(), library))  # type: ignore[arg-type]
    assert set(library.calls) == set(blas_nvidia.SIGNATURES)
    for call in ("xgetrf", "xgetrs", "xpotrf", "xgeqrf", "sorgqr", "zungqr", "xsyevd", "xgesvd",
                 "create_gesvdj_info", "sgesvdj", "zgesvdj_buffer_size", "zgesvdj"):
        assert call in record.names(), call


def test_a_first_matmul_imports_no_cusolver_binding(nvidia: Any) -> None:
    (_, blas_nvidia), record, _ = nvidia
    library = _Library(blas_nvidia.SIGNATURES)
    blas = blas_nvidia.NvidiaBlas(_ctypes_runtime(), library)  # type: ignore[arg-type]
    blas.gemm(dtypes.float32, "N", "N", 4, 4, 4, HANDLE, 4, 16, HANDLE, 4, 16, HANDLE, 4, 16, 1)
    assert library.calls[-1] == "cublasGemmEx" and not record.names()


@pytest.mark.parametrize("module, signatures, call, args, status, name", [
    ("fft_nvidia", "cufftMakePlanMany64", "execute", ("c2c", dtypes.complex64, (8,), 1, HANDLE, HANDLE, False),
     0x8, "CUFFT_INVALID_SIZE"),
    ("fft_nvidia", "cufftMakePlanMany64", "execute", ("c2c", dtypes.complex64, (8,), 1, HANDLE, HANDLE, False),
     0x2, "CUFFT_ALLOC_FAILED"),
    ("blas_nvidia", "cublasGemmEx", "gemm",
     (dtypes.float32, "N", "N", 4, 4, 4, HANDLE, 4, 16, HANDLE, 4, 16, HANDLE, 4, 16, 1), 7,
     "CUBLAS_STATUS_INVALID_VALUE"),
    ("blas_nvidia", "cublasGemmEx", "gemm",
     (dtypes.float32, "N", "N", 4, 4, 4, HANDLE, 4, 16, HANDLE, 4, 16, HANDLE, 4, 16, 1), 3,
     "CUBLAS_STATUS_ALLOC_FAILED"),
])
def test_a_failed_ctypes_call_names_the_call_and_status(module: str, signatures: str, call: str, args: tuple[Any, ...],
                                                        status: int, name: str) -> None:
    """DriverError (DriverOutOfMemory for the library's allocation failure) names the call and the
    status; a plan that failed to be made is freed."""
    from rocm_array.runtime.protocol import DriverError, DriverOutOfMemory

    mod = importlib.import_module(f"rocm_array.runtime.{module}")
    library = _Library(mod.SIGNATURES, {signatures: status})
    opened = (mod.Cufft if module == "fft_nvidia" else mod.NvidiaBlas)(_ctypes_runtime(), library)
    error = DriverOutOfMemory if "ALLOC" in name else DriverError
    with pytest.raises(error, match=f"{signatures} failed: {name}"):
        getattr(opened, call)(*args)
    if module == "fft_nvidia":
        assert library.calls[-1] == "cufftDestroy" and not opened._plans


def test_the_installed_cufft_opens_and_answers_its_version() -> None:
    """The real library file, opened as a first fft does (``libfiles.CUFFT``); its version needs no GPU."""
    from rocm_array.runtime import fft_nvidia

    _header("cufft.h")  # (skips, or fails under ROCM_ARRAY_REQUIRE_BINDINGS=nvidia, where cuFFT is missing)
    version = ctypes.c_int()
    assert fft_nvidia.open_cufft().handle.cufftGetVersion(ctypes.byref(version)) == 0 and version.value >= 11000


def test_a_library_file_is_searched_for_once_a_sys_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``libfiles.locate``: a wheel's copy on ``sys.path``, found once (the preload's search serves the
    library's first call), and found again where ``sys.path`` changed; else the bare soname."""
    from rocm_array.runtime import libfiles

    soname = "librocm_array_test_locate.so.1"
    wheel = tmp_path / "site" / "nvidia" / "cu99" / "lib"
    wheel.mkdir(parents=True)
    (wheel / soname).write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "empty")])
    assert libfiles.locate(soname) == soname
    globbed: list[str] = []
    real = glob.glob
    monkeypatch.setattr(libfiles.glob, "glob", lambda pattern: globbed.append(pattern) or real(pattern))
    monkeypatch.setattr(sys, "path", [str(tmp_path / "empty"), str(tmp_path / "site")])
    assert libfiles.locate(soname) == str(wheel / soname)
    assert len(globbed) == 2
    assert libfiles.locate(soname) == str(wheel / soname) and len(globbed) == 2  # (no search the second time)
