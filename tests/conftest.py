"""Shared fixtures: every test that takes ``device`` runs on each device present.

On a GPU machine (``ROCM_ARRAY_DEVICE=gpu:0``) the same tests run on ``cpu`` and
``gpu:0``. A GPU back that is not written yet raises NotImplementedError; such a
test is reported as xfail naming what is missing, never as a pass.
"""

from __future__ import annotations

import os

import pytest

# scikit-learn's array-API dispatch needs SciPy's, which SciPy reads once, at its import.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import rocm_array as xp  # noqa: E402

DEVICES = [str(d) for d in xp.__array_namespace_info__().devices()]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    params = getattr(item, "callspec", None)
    on_gpu = params is not None and str(params.params.get("device", "")).startswith("gpu")
    if on_gpu and call.excinfo is not None and call.excinfo.errisinstance(NotImplementedError):
        report.outcome = "skipped"
        report.wasxfail = f"not on the GPU yet: {call.excinfo.value}"
