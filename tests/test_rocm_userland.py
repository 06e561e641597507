"""The ``amd`` platform's calls against the real ROCm libraries, on a machine without a GPU.

Run where ROCm's runtime libraries and hip-python load (``.ci/rocm6`` runs this module in a
Debian sid chroot with ROCm 6.4); skipped elsewhere, naming what is missing, unless
``ROCM_ARRAY_REQUIRE_ROCM=1`` makes a missing library a failure. What needs no device is
checked for real: discovery's reason, hiprtc through the runtime's own ``HiprtcRtc``, the MIOpen
descriptors the conv and pool paths build, and the library handles' errors without a device.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import re
import struct
import types
from typing import Any, NoReturn

import pytest

from rocm_array import dtypes
from rocm_array.memory.copies import COPIES
from rocm_array.occupancy import codeobject
from rocm_array.runtime import discover, targets
from rocm_array.runtime.compiler import compile_program, kernel_source
from rocm_array.runtime.dnn import Tensor, Unsupported
from rocm_array.runtime.layout import contiguous_strides
from rocm_array.runtime.protocol import DriverError

REQUIRED = os.environ.get("ROCM_ARRAY_REQUIRE_ROCM") == "1"

#: ELF e_machine of AMD GPU code objects, and the EF_AMDGPU_MACH value in e_flags of each target.
EM_AMDGPU = 224
MACH = {"gfx90a": 0x3F, "gfx942": 0x4C, "gfx1030": 0x36, "gfx1100": 0x41}


def _missing(what: str, exc: BaseException) -> NoReturn:
    message = f"{what} is not loadable: {type(exc).__name__}: {exc}"
    if REQUIRED:
        pytest.fail(f"{message} (ROCM_ARRAY_REQUIRE_ROCM=1)", pytrace=False)
    pytest.skip(message)


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception as exc:  # hip-python not installed, or a library it loads at import missing
        _missing(name, exc)


@pytest.fixture(scope="module")
def amd() -> Any:
    """``rocm_array.runtime.amd`` with libamdhip64 loaded (its ``hipInit`` runs, whatever it returns)."""
    module = _module("rocm_array.runtime.amd")
    try:
        module.hip.hipInit(0)
    except Exception as exc:  # hip-python found no libamdhip64.so
        _missing("libamdhip64 (through hip-python)", exc)
    return module


@pytest.fixture(scope="module")
def no_gpu(amd: Any) -> None:
    """The device-less error paths are only what they are without a device."""
    status, count = amd.hip.hipGetDeviceCount()
    if status == amd.hip.hipError_t.hipSuccess and count > 0:
        pytest.skip(f"{count} AMD GPU(s) present: the GPU tests cover these calls")


@pytest.fixture()
def stand_in_rt() -> Any:
    """What ``AmdBlas`` and ``HipFft`` use of a GpuRuntime up to their handles, without a device."""
    driver = types.SimpleNamespace(activate=lambda: None, stream=0, synchronize=lambda: None)
    return types.SimpleNamespace(driver=driver, allocate=lambda nbytes: types.SimpleNamespace(ptr=0, nbytes=nbytes))


def test_discovery_names_hips_status(amd: Any, no_gpu: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCM_ARRAY_PLATFORM", "amd")
    found, problems = discover()
    assert found == []
    # The status by name, as text, then HIP's own sentence: not a tuple, not a number, not an enum's repr.
    assert len(problems) == 1 and re.fullmatch(r"amd: DriverError: hipInit failed: hipError[A-Za-z]+ \([^()]+\)",
                                               problems[0]), problems


@pytest.mark.parametrize("arch, wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_hiprtc_builds_a_code_object(amd: Any, arch: str, wave: int) -> None:
    rtc = amd.HiprtcRtc()
    try:
        version = rtc.version()
    except Exception as exc:
        _missing("libhiprtc (through hip-python)", exc)
    assert re.fullmatch(r"\d+\.\d+", version)
    names = ["fill<float>", "fill<int8_t>"]
    code, lowered = compile_program(rtc, kernel_source(COPIES.source), COPIES.source, names,
                                    [*rtc.target_options(arch, wave), *COPIES.options(targets.kind(arch, wave))], arch)
    assert code[:4] == b"\x7fELF"
    machine, = struct.unpack_from("<H", code, 18)
    flags, = struct.unpack_from("<I", code, 48)
    assert (machine, flags & 0xFF) == (EM_AMDGPU, MACH[arch])
    # The code object's metadata (MessagePack) records the wave size each kernel was built for, and
    # what it holds: the resource report reads it (rocm_array.occupancy).
    assert code.count(b".wavefront_size" + bytes([wave])) == len(names)
    assert lowered["fill<float>"].startswith("_Z4fillIfE") and lowered["fill<int8_t>"].startswith("_Z4fillIaE")
    kernels = codeobject.amd_kernels(code)
    assert sorted(kernels) == sorted(lowered.values())
    for use in kernels.values():
        assert (use.wave_size, use.max_threads, use.scratch, use.lds) == (wave, 1024, 0, 0)
        assert 0 < use.vgprs <= 32 and 0 < use.sgprs <= 106


def test_the_compile_check_reports_what_hiprtcs_kernels_hold(amd: Any, tmp_path: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The resource report of the portability check's kernels for each AMD target, end to end."""
    from rocm_array import compile_check
    from rocm_array.occupancy import report

    targets = [t for t in compile_check.TARGETS if t.startswith("gfx")]
    out = tmp_path / "resources.json"
    status = compile_check.main([*(f"--target={t}" for t in targets), "--path", compile_check.PORTABILITY.path,
                                 "--jobs", "1", "--resources", str(out)])
    log = capsys.readouterr().out
    assert status == 0, log
    rows = report.read([out])
    assert sorted({r.target for r in rows}) == sorted(targets)
    assert len(rows) == len(targets) * len(compile_check.PORTABILITY.names)
    for r in rows:
        assert r.threads == 1024 and r.use.max_threads == 1024 and r.use.scratch == 0 and r.waves >= 2
        assert r.use.wave_size == compile_check.TARGETS[r.target][2]
    assert "every kernel within the resource budget" in log


@pytest.fixture(scope="module")
def miopen() -> Any:
    dnn_amd = _module("rocm_array.runtime.dnn_amd")
    try:
        return dnn_amd.Descriptors()
    except OSError as exc:
        _missing("libMIOpen", exc)


def _cpu(shape: tuple[int, ...], dtype: Any = dtypes.float32) -> Tensor:
    """A tensor's layout, as the nn backs describe one (no memory behind it: nothing is run)."""
    return Tensor(0, shape, contiguous_strides(shape), dtype)


def test_miopen_tensor_descriptor(miopen: Any) -> None:
    a = Tensor(0, (2, 3, 3, 6), (105, 35, 14, 1), dtypes.float32)  # strided: the descriptor carries the strides
    with miopen.tensor(a) as desc:
        kind, dims, strides = ctypes.c_int(), (ctypes.c_int * 4)(), (ctypes.c_int * 4)()
        miopen.call("miopenGetTensorDescriptor", desc, ctypes.byref(kind), dims, strides)
    assert (kind.value, tuple(dims), tuple(strides)) == (1, a.shape, a.strides)  # 1: miopenFloat


def test_miopen_tensor_descriptor_refuses_a_dtype_it_lacks(miopen: Any) -> None:
    with pytest.raises(Unsupported, match="MIOpen has no int32 tensors"):
        with miopen.tensor(_cpu((1, 1, 2, 2), dtypes.int32)):
            pass


@pytest.mark.parametrize("transposed", [False, True], ids=["forward", "transposed"])
def test_miopen_convolution_descriptor(miopen: Any, transposed: bool) -> None:
    """MIOpen's own output shape for the descriptor is the shape the caller allocated: padding,
    stride, dilation, groups and (transposed) the output padding all reached it."""
    stride, padding, dilation, groups = (2, 1), (1, 0), (1, 2), 2
    x = _cpu((2, 4, 9, 8))
    if transposed:  # weights (C, K/groups, kh, kw); output padding (1, 0)
        w = _cpu((4, 3, 3, 2))
        y = _cpu((2, 6, (9 - 1) * 2 - 2 + 2 + 1 + 1, (8 - 1) * 1 + 2 * 1 + 1))
    else:  # weights (K, C/groups, kh, kw)
        w = _cpu((6, 2, 3, 2))
        y = _cpu((2, 6, (9 + 2 - 3) // 2 + 1, (8 - 2 * 1 - 1) // 1 + 1))
    with miopen.tensor(x) as xd, miopen.tensor(w) as wd, \
            miopen.convolution(y, x, w, stride, padding, dilation, groups, transposed) as cd:
        n, dims = ctypes.c_int(), (ctypes.c_int * 4)()
        miopen.call("miopenGetConvolutionNdForwardOutputDim", cd, xd, wd, ctypes.byref(n), dims)
        count = ctypes.c_int()
        miopen.call("miopenGetConvolutionGroupCount", cd, ctypes.byref(count))
    assert (tuple(dims[:n.value]), count.value) == (y.shape, groups)


@pytest.mark.parametrize("mode", ["max", "avg_include_pad", "avg_exclude_pad"])
def test_miopen_pooling_descriptor(miopen: Any, mode: str) -> None:
    x = _cpu((2, 3, 11, 8))
    window, stride, padding = (3, 2), (2, 2), (1, 0)
    with miopen.tensor(x) as xd, miopen.pooling(window, stride, padding, mode) as pd:
        dims = [ctypes.c_int() for _ in range(4)]
        miopen.call("miopenGetPoolingForwardOutputDim", pd, xd, *map(ctypes.byref, dims))
    assert tuple(d.value for d in dims) == (2, 3, (11 + 2 - 3) // 2 + 1, (8 - 2) // 2 + 1)


def test_hipblas_handle_without_a_device(no_gpu: None, stand_in_rt: Any) -> None:
    blas_amd = _module("rocm_array.runtime.blas_amd")
    with pytest.raises(DriverError, match=r"^hipblasCreate failed: HIPBLAS_STATUS_[A-Z_]+"):
        blas_amd.AmdBlas(stand_in_rt)


def test_hipsolver_handle_without_a_device(no_gpu: None, stand_in_rt: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """hipBLAS stood in (it fails first without a device); the solver handle is made at the first
    solver call, where hipsolverCreate fails by name."""
    blas_amd = _module("rocm_array.runtime.blas_amd")
    hipblas = blas_amd.hipblas
    ok = hipblas.hipblasStatus_t.HIPBLAS_STATUS_SUCCESS
    monkeypatch.setattr(hipblas, "hipblasCreate", lambda: (ok, 1))
    monkeypatch.setattr(hipblas, "hipblasSetStream", lambda handle, stream: (ok,))
    monkeypatch.setattr(hipblas, "hipblasSetWorkspace", lambda handle, ptr, size: (ok,), raising=False)  # hipBLAS 3 only
    blas = blas_amd.AmdBlas(stand_in_rt)  # a matmul alone never loads hipSOLVER
    with pytest.raises(DriverError, match=r"^hipsolverCreate failed: HIPSOLVER_STATUS_[A-Z_]+"):
        blas._solver


def test_hipfft_plan_without_a_device(no_gpu: None, stand_in_rt: Any) -> None:
    """hipfftCreate works without a device; making the plan is the call that fails, by name."""
    fft_amd = _module("rocm_array.runtime.fft_amd")
    fft = fft_amd.HipFft(stand_in_rt)
    with pytest.raises(DriverError, match=r"^hipfftMakePlanMany64 failed: HIPFFT_[A-Z_]+"):
        fft.execute("c2c", dtypes.complex64, (8,), 1, 0, 0, False)
