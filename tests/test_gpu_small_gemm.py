"""The small float32 GEMM (rocm_array_kernels/linalg/small_gemm.hip, rocm_array_plugins/linalg/small_gemm.py) against
NumPy: every instantiation at shapes that fill its tile and shapes that leave edges in m, n and k,
padded rows, batch strides, a broadcast operand; and which products the plan gives it.

The kernel tests launch it directly, so they run on the simulator too (CI's wave-64 and wave-32
runs), where the plan never takes it: only GPUs with asynchronous copies do.
"""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host
from rocm_array import dtypes
from rocm_array.devices import gpus
from rocm_array_plugins.linalg import small_gemm
from rocm_array_plugins.linalg.small_gemm import CONFIGS, FULL, GENERAL, SMALL

pytestmark = pytest.mark.skipif(not gpus(), reason="no GPU")
SHAPES = [(64, 64, 64), (32, 32, 32), (60, 20, 36), (1, 4, 4), (33, 64, 16), (17, 8, 52), (5, 12, 64)]


def _on(a: np.ndarray) -> xp.Array:
    return xp.asarray(a, device=str(gpus()[0]))


def _check(out: xp.Array, a: np.ndarray, b: np.ndarray) -> None:
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    # float32 sums of at most 64 products of numbers in [-1, 1): a few ulp of the largest term sum.
    np.testing.assert_allclose(host(out), ref, rtol=0, atol=64 * 2**-23 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_small_gemm_matches_numpy(cfg: small_gemm.Config, m: int, n: int, k: int) -> None:
    if max(m, n, k) > cfg.tile:
        pytest.skip(f"{m}x{k} @ {k}x{n} is larger than the {cfg.tile} tile")
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    count = 5
    a = rng.uniform(-1, 1, (count, m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (count, k, n)).astype(np.float32)
    out = xp.full((count, m, n), xp.nan, dtype=xp.float32, device=str(gpus()[0]))
    small_gemm.launch(cfg, out, _on(a), _on(b), m, n, k, count, k, m * k, n, k * n)
    _check(out, a, b)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_small_gemm_padded_rows_and_a_broadcast_operand(cfg: small_gemm.Config) -> None:
    """a's rows 12 floats apart inside a wider array; b one matrix for the whole batch (batch stride 0)."""
    m, n, k, count = min(cfg.tile, 24), 16, 8, 3
    rng = np.random.default_rng(7)
    wide = rng.uniform(-1, 1, (count, m, 12)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    out = xp.empty((count, m, n), dtype=xp.float32, device=str(gpus()[0]))
    small_gemm.launch(cfg, out, _on(wide), _on(b), m, n, k, count, 12, m * 12, n, 0)
    _check(out, wide[:, :, :k], np.broadcast_to(b, (count, k, n)))


def _async_gpu() -> bool:
    return bool(gpus()) and small_gemm._async_copies(gpus()[0])


@pytest.mark.skipif(not _async_gpu(), reason="the plan takes the kernel only on GPUs with asynchronous copies")
def test_plan_takes_small_aligned_float32_products() -> None:
    rng = np.random.default_rng(3)
    x = _on(rng.uniform(-1, 1, (8, 64, 68)).astype(np.float32))
    dev = gpus()[0]

    def plan(m: int, n: int, k: int, count: int = 512, dtype: dtypes.DType = dtypes.float32,
             a: xp.Array = x, lda: int = 68) -> object:
        return small_gemm.plan(dev, dtype, m, n, k, count, a, lda, 64 * 68, x, 68, 64 * 68)

    sms = dev.runtime.properties.compute_units
    assert plan(64, 64, 64, count=2 * sms + 1) is FULL  # full-height products, two blocks an SM
    assert plan(64, 64, 64, count=2 * sms) is GENERAL
    assert plan(40, 64, 64) is GENERAL
    assert plan(32, 32, 32, count=1) is SMALL  # a single 32 x 32 product too
    assert plan(64, 64, 64, count=small_gemm.MIN_COUNT - 1) is None  # too few for the 64 tile
    assert plan(64, 32, 64) is None  # half the tile's columns idle
    assert plan(64, 64, 64, dtype=dtypes.float64) is None  # float32 only
    assert plan(65, 64, 64) is None  # larger than the tile
    assert plan(64, 64, 62) is None  # k not whole 16-byte pieces
    assert plan(64, 64, 64, a=x[:, :, 1:]) is None  # a not 16-byte aligned
    assert plan(64, 64, 64, lda=66) is None  # rows not 16-byte aligned


@pytest.mark.parametrize("batch,m,n,k", [(512, 64, 64, 64), (200, 48, 48, 40), (7, 48, 16, 40), (3, 64, 8, 64),
                                          (2, 16, 12, 20)])
def test_matmul_of_small_float32_batches(batch: int, m: int, n: int, k: int) -> None:
    """Through ``@``: the small kernel where the plan takes it, the BLAS elsewhere; the same results."""
    if gpus()[0].runtime.properties.platform == "sim":
        pytest.skip("the simulator has no BLAS")
    rng = np.random.default_rng(batch)
    a = rng.uniform(-1, 1, (batch, m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (batch, k, n)).astype(np.float32)
    _check(_on(a) @ _on(b), a, b)
