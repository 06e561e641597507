"""Dask with rocm_array chunks, threaded and on a two-worker LocalCluster: every chunk and result
stays a rocm_array array on the input's device (NEP 13/18 through the numpy_dispatch plugin)."""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp

from engines import assert_on

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

H = np.random.default_rng(0).standard_normal((40, 30))

CASES = {
    "sum": (lambda d: d.sum(), lambda h: h.sum()),
    "sum_axis": (lambda d: d.sum(axis=0), lambda h: h.sum(0)),
    "mean_axis": (lambda d: d.mean(axis=1), lambda h: h.mean(1)),
    "std": (lambda d: d.std(), lambda h: h.std()),
    "var_axis": (lambda d: d.var(axis=0), lambda h: h.var(0)),
    "max": (lambda d: d.max(axis=0), lambda h: h.max(0)),
    "argmax": (lambda d: d.argmax(axis=0), lambda h: h.argmax(0)),
    "nanmean": (lambda d: da.nanmean(d, axis=0), lambda h: np.nanmean(h, 0)),
    "elementwise": (lambda d: da.exp(d * 2 + 1) - d, lambda h: np.exp(h * 2 + 1) - h),
    "map_blocks": (lambda d: d.map_blocks(lambda b: b * 3 + 1), lambda h: h * 3 + 1),
    "blockwise": (lambda d: da.blockwise(lambda a, b: a * b, "ij", d, "ij", d.T.T, "ij", dtype=d.dtype),
                  lambda h: h * h),
    "rechunk": (lambda d: d.rechunk((20, 30)), lambda h: h),
    "matmul": (lambda d: d @ d.T, lambda h: h @ h.T),
    "dot": (lambda d: da.dot(d.T, d), lambda h: h.T @ h),
    "slice": (lambda d: d[3:17, ::2], lambda h: h[3:17, ::2]),
    "concatenate": (lambda d: da.concatenate([d, d], axis=0), lambda h: np.concatenate([h, h])),
    "cumsum": (lambda d: d.cumsum(axis=0), lambda h: h.cumsum(0)),
}


@pytest.mark.parametrize("case", CASES)
def test_threaded(device: str, case: str) -> None:
    x = xp.asarray(H, device=device)
    f, ref = CASES[case]
    d = da.from_array(x, chunks=(10, 15))
    assert isinstance(d._meta, xp.Array)
    blocks = d.to_delayed().ravel()
    assert isinstance(blocks[0].compute(scheduler="threads"), xp.Array)
    assert_on(f(d).compute(scheduler="threads"), ref(H), device)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as c, distributed.Client(c) as client:
        yield client


@pytest.mark.parametrize("case", ["sum_axis", "mean_axis", "std", "map_blocks", "rechunk", "matmul"])
def test_local_cluster(cluster, device: str, case: str) -> None:
    """Chunks pickle to two worker processes (the view's elements, restored on the same device)."""
    x = xp.asarray(H, device=device)
    f, ref = CASES[case]
    assert_on(cluster.compute(f(da.from_array(x, chunks=(10, 15)))).result(), ref(H), device)
