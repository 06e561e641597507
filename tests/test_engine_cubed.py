"""Cubed with rocm_array as its backend (CUBED_BACKEND_ARRAY_API_MODULE), on the threads and
processes executors, on the default device: every result is a rocm_array array there.

Cubed writes each chunk to Zarr through ``np.asarray``; rocm_array refuses that for GPU arrays
(and for cpu ones under ROCM_ARRAY_STRICT_HOST=1) unless ROCM_ARRAY_HOST_COPY=1 asks for the copy,
which each test here sets (the processes executor's workers inherit it). Cubed reads a backend
from the environment once, at its import: this module sets it before importing Cubed.
"""

from __future__ import annotations

import os

os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] = "rocm_array"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rocm_array as xp  # noqa: E402

from engines import assert_on  # noqa: E402

cubed = pytest.importorskip("cubed")
ca = pytest.importorskip("cubed.array_api")
from cubed.runtime.executors.local import ProcessesExecutor, ThreadsExecutor  # noqa: E402

H = np.random.default_rng(3).standard_normal((40, 30))
DEVICE = str(xp.asarray(0).device)  # Cubed creates on the default device

CASES = {
    "creation": (lambda a, s: ca.ones((20, 10), chunks=(5, 5), spec=s), lambda h: np.ones((20, 10))),
    "elementwise_chain": (lambda a, s: ca.exp(a * 2 + 1) - a, lambda h: np.exp(h * 2 + 1) - h),
    "reshape": (lambda a, s: ca.reshape(a, (4, 10, 30)), lambda h: h.reshape(4, 10, 30)),
    "sum_axis": (lambda a, s: ca.sum(a, axis=0), lambda h: h.sum(0)),
    "mean_axis": (lambda a, s: ca.mean(a, axis=1), lambda h: h.mean(1)),
    "max": (lambda a, s: ca.max(a), lambda h: h.max()),
    "argmax_axis": (lambda a, s: ca.argmax(a, axis=0), lambda h: h.argmax(0)),
    "std_axis": (lambda a, s: ca.std(a, axis=0), lambda h: h.std(0)),
    "matmul": (lambda a, s: ca.matmul(a, ca.permute_dims(a, (1, 0))), lambda h: h @ h.T),
    "rechunk": (lambda a, s: a.rechunk((20, 15)), lambda h: h),
    "slicing": (lambda a, s: a[3:17, ::2], lambda h: h[3:17, ::2]),
    "concat": (lambda a, s: ca.concat([a, a], axis=0), lambda h: np.concatenate([h, h])),
    "cumulative_sum": (lambda a, s: ca.cumulative_sum(a, axis=0), lambda h: np.cumsum(h, 0)),
    "tensordot": (lambda a, s: ca.tensordot(a, a, axes=([0], [0])), lambda h: np.tensordot(h, h, axes=([0], [0]))),
}


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCM_ARRAY_HOST_COPY", "1")
    return cubed.Spec(work_dir=str(tmp_path), allowed_mem="500MB")


@pytest.mark.parametrize("case", CASES)
def test_threads(spec, case: str) -> None:
    f, ref = CASES[case]
    a = ca.asarray(H, chunks=(10, 10), spec=spec)
    assert_on(f(a, spec).compute(executor=ThreadsExecutor()), ref(H), DEVICE)


@pytest.mark.parametrize("case", ["elementwise_chain", "sum_axis", "std_axis", "matmul"])
def test_processes(spec, case: str) -> None:
    f, ref = CASES[case]
    a = ca.asarray(H, chunks=(10, 10), spec=spec)
    assert_on(f(a, spec).compute(executor=ProcessesExecutor()), ref(H), DEVICE)


def test_reduction_over_hundreds_of_chunks(spec) -> None:
    h = np.arange(40000, dtype=np.float64).reshape(200, 200) / 7
    a = ca.asarray(h, chunks=(10, 10), spec=spec)  # 400 chunks
    assert_on(ca.sum(a).compute(executor=ThreadsExecutor()), h.sum(), DEVICE, rtol=1e-12)
    assert_on(ca.mean(a, axis=0).compute(executor=ThreadsExecutor()), h.mean(0), DEVICE, rtol=1e-12)


def test_zarr_round_trip(spec, tmp_path) -> None:
    store = str(tmp_path / "round.zarr")
    cubed.to_zarr(ca.asarray(H, chunks=(10, 10), spec=spec) * 2, store, executor=ThreadsExecutor())
    back = cubed.from_zarr(store, spec=spec)
    assert_on(back.compute(executor=ThreadsExecutor()), H * 2, DEVICE)
