"""A pytest plugin that adds rocm_array to scikit-learn's array-API test namespaces.

Load it with ``-p sklearn_namespaces`` (``tests/`` on ``PYTHONPATH``) to run scikit-learn's own
tests against rocm_array; ``scripts/sklearn_tests.sh`` does that on one device, and ``.ci/run`` on
``cpu``. scikit-learn's test modules parametrize over ``yield_namespaces`` and
``yield_namespace_device_dtype_combinations`` when they are imported, so the plugin patches both
before collection: ``rocm_array`` on ``cpu`` and on each GPU present, in float64 and float32
(``-k rocm_array`` selects those tests).

Two outcomes are reported as xfail, never as passes, each with its reason:

- ``test_label_binarize_unsigned_integer_overflow`` on arrays NumPy may not read in place (a GPU's,
  or cpu ones under ``ROCM_ARRAY_STRICT_HOST=1``): the test converts ``label_binarize``'s result
  with scikit-learn's private ``_convert_to_numpy``, which knows CuPy's and PyTorch's host copies
  and calls ``np.asarray`` on any other library's array; rocm_array refuses that implicit copy by
  design. ``move_to``, scikit-learn's conversion, goes through DLPack and works; the values are
  checked on every device by ``tests/test_engine_sklearn.py``.
- On the simulator (``ROCM_ARRAY_PLATFORM=sim``), a ``VendorUnavailable``: it has no BLAS, solver
  or FFT library, so those paths (PCA, Ridge, pairwise distances…) run on a real GPU only.
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

import rocm_array as xp
from rocm_array.array import numpy_may_view
from rocm_array.runtime.vendor import VendorUnavailable
from sklearn.utils import _array_api

_NAMESPACES = _array_api.yield_namespaces
_COMBINATIONS = _array_api.yield_namespace_device_dtype_combinations
#: ``cpu`` and the GPUs found (none without one): a test asks only for devices that exist.
DEVICES: tuple[str, ...] = tuple(str(d) for d in xp.__array_namespace_info__().devices())
#: scikit-learn tests that convert a result by ``np.asarray``, which a GPU array refuses.
IMPLICIT_HOST_COPY = ("test_label_binarize_unsigned_integer_overflow",)


def yield_namespaces(include_numpy_namespaces: bool = True) -> Iterator[str]:
    yield from _NAMESPACES(include_numpy_namespaces=include_numpy_namespaces)
    yield "rocm_array"


def yield_namespace_device_dtype_combinations(include_numpy_namespaces: bool = True
                                              ) -> Iterator[tuple[str, str | None, str | None]]:
    # scikit-learn's own loop calls the patched yield_namespaces and gives rocm_array no device.
    yield from (c for c in _COMBINATIONS(include_numpy_namespaces=include_numpy_namespaces) if c[0] != "rocm_array")
    for device in DEVICES:
        for dtype in ("float64", "float32"):
            yield "rocm_array", device, dtype


_array_api.yield_namespaces = yield_namespaces
_array_api.yield_namespace_device_dtype_combinations = yield_namespace_device_dtype_combinations


def _params(item: pytest.Item) -> dict[str, object]:
    callspec = getattr(item, "callspec", None)
    return {} if callspec is None else dict(callspec.params)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = _params(item)
        if item.name.split("[")[0] in IMPLICIT_HOST_COPY and params.get("array_namespace") == "rocm_array" \
                and not numpy_may_view(xp.asarray(0, device=str(params["device_name"]))):
            item.add_marker(pytest.mark.xfail(
                raises=TypeError, strict=True,
                reason="the test converts with scikit-learn's _convert_to_numpy, which calls np.asarray on a "
                       "library it does not know; rocm_array refuses implicit copies of arrays NumPy may not "
                       "read in place (move_to's DLPack path works)"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("ROCM_ARRAY_PLATFORM") == "sim" and call.excinfo is not None \
            and call.excinfo.errisinstance(VendorUnavailable):
        report.outcome = "skipped"
        report.wasxfail = f"the simulator has no vendor library: {call.excinfo.value}"
