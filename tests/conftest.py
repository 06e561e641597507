"""Shared fixtures: every test that takes ``device`` runs on each device present.

On a GPU machine (``ROCM_ARRAY_DEVICE=gpu:0``) the same tests run on ``cpu`` and
``gpu:0``. A GPU back that is not written yet raises NotImplementedError; such a
test is reported as xfail naming what is missing, never as a pass.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

# scikit-learn's array-API dispatch needs SciPy's, which SciPy reads once, at its import.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import rocm_array as xp  # noqa: E402
from rocm_array.devices import Device  # noqa: E402

DEVICES = [str(d) for d in xp.__array_namespace_info__().devices()]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def fusing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fusion on; a new expression's kernel compiles at its first computation (so it runs), and a
    lane defers however its earlier results were used (tests of deferral run in any order)."""
    from rocm_array import fusion
    from rocm_array_plugins.elementwise import deferred

    monkeypatch.setattr(deferred, "COMPILE_IN_BACKGROUND", False)
    monkeypatch.setattr(deferred, "LONE_STREAK", 1 << 62)
    was = fusion.enabled()
    fusion.set_enabled(True)
    try:
        yield
    finally:
        fusion.set_enabled(was)


@pytest.fixture
def recording(tmp_path: Path, fusing: None) -> Device:
    """A device over a recording driver (launches are recorded, nothing runs), compiling with NVRTC;
    fusion on."""
    from helpers import RecordingDriver
    from rocm_array.runtime.compiler import Compiler
    from rocm_array.runtime.gpu import GpuRuntime

    nvidia = pytest.importorskip("rocm_array.runtime.nvidia", reason="cuda-bindings is not installed")
    rt = GpuRuntime(RecordingDriver())  # type: ignore[arg-type]
    try:
        rt.compiler = Compiler(nvidia.NvrtcRtc(), "sm_90", 32, tmp_path)
    except Exception as exc:  # NVRTC's library missing
        pytest.skip(f"NVRTC unavailable: {exc}")
    return Device("gpu", 0, rt)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    params = getattr(item, "callspec", None)
    on_gpu = params is not None and str(params.params.get("device", "")).startswith("gpu")
    if on_gpu and call.excinfo is not None and call.excinfo.errisinstance(NotImplementedError):
        report.outcome = "skipped"
        report.wasxfail = f"not on the GPU yet: {call.excinfo.value}"
