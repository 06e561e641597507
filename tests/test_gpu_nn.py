"""The nn plugin's GPU paths: the vendor library (cuDNN / MIOpen) and the own kernels, each
against the cpu device's results, and indices checked on the device.

``ROCM_ARRAY_NN_VENDOR=0`` forces the own kernels; both settings run here. Skipped
without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host, storage
from rocm_array import devices
from rocm_array.runtime import dnn

GPUS = [str(d) for d in devices.gpus()]
pytestmark = pytest.mark.skipif(not GPUS, reason="no GPU")
TOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}


@pytest.fixture(params=["vendor", "own"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ROCM_ARRAY_NN_VENDOR", "1" if request.param == "vendor" else "0")
    return request.param


def pair(a: np.ndarray, dtype: str) -> tuple[xp.Array, xp.Array]:
    a = a.astype(storage(dtype))
    return xp.asarray(a, device="cpu"), xp.asarray(a, device=GPUS[0])


def agree(gpu: xp.Array, cpu: xp.Array, dtype: str, scale: float = 1.0) -> None:
    g, c = host(gpu).astype(np.float64), host(cpu).astype(np.float64)
    assert gpu.dtype == cpu.dtype and g.shape == c.shape
    np.testing.assert_allclose(g, c, rtol=TOL[dtype], atol=TOL[dtype] * scale * max(1.0, np.abs(c).max(initial=0)))


def test_vendor_library_loads_where_expected() -> None:
    rt = devices.parse(GPUS[0]).runtime
    lib = dnn.library(rt)
    print(f"{rt.platform}: {lib.name if lib else 'no vendor library'} {dnn.why(rt)}")
    assert lib is not None or dnn.why(rt)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("xs, ws, opts", [
    ((2, 16, 14, 14), (32, 16, 3, 3), dict(padding=1)),
    ((1, 8, 13, 11), (8, 2, 3, 3), dict(stride=2, padding=(1, 0), dilation=(1, 2), groups=4)),
])
def test_conv2d_paths(path: str, dtype: str, xs, ws, opts) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    (xc, xg), (wc, wg) = pair(rng.uniform(-1, 1, xs), dtype), pair(rng.uniform(-1, 1, ws), dtype)
    agree(xp.nn.conv2d(xg, wg, **opts), xp.nn.conv2d(xc, wc, **opts), dtype, scale=10)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_conv_transposed_and_1d_paths(path: str, dtype: str) -> None:
    rng = np.random.default_rng(1)
    (xc, xg), (wc, wg) = pair(rng.uniform(-1, 1, (2, 8, 7, 9)), dtype), pair(rng.uniform(-1, 1, (8, 3, 3, 3)), dtype)
    opts = dict(stride=2, padding=1, output_padding=1, groups=2)
    agree(xp.nn.conv_transpose2d(xg, wg, **opts), xp.nn.conv_transpose2d(xc, wc, **opts), dtype, scale=10)
    (ac, ag), (vc, vg) = pair(rng.uniform(-1, 1, (3, 4, 50)), dtype), pair(rng.uniform(-1, 1, (6, 4, 5)), dtype)
    agree(xp.nn.conv1d(ag, vg, padding=2), xp.nn.conv1d(ac, vc, padding=2), dtype, scale=10)
    (bc, bg), (uc, ug) = pair(rng.uniform(-1, 1, (3, 6, 20)), dtype), pair(rng.uniform(-1, 1, (6, 2, 4)), dtype)
    agree(xp.nn.conv_transpose1d(bg, ug, stride=3), xp.nn.conv_transpose1d(bc, uc, stride=3), dtype, scale=10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("fn, args", [("max_pool2d", (2,)), ("avg_pool2d", (3, 2, 1)), ("max_pool2d", (3, 1, 1))])
def test_pool_paths(path: str, dtype: str, fn: str, args: tuple[int, ...]) -> None:
    xc, xg = pair(np.random.default_rng(2).uniform(-1, 1, (4, 8, 17, 16)), dtype)
    agree(getattr(xp.nn, fn)(xg, *args), getattr(xp.nn, fn)(xc, *args), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_large_rows(dtype: str) -> None:
    """Rows longer than a block (grid-striding, online softmax across threads)."""
    xc, xg = pair(np.random.default_rng(3).uniform(-20, 20, (64, 20000)), dtype)
    agree(xp.nn.softmax(xg), xp.nn.softmax(xc), dtype)
    agree(xp.nn.log_softmax(xg, axis=0), xp.nn.log_softmax(xc, axis=0), dtype, scale=10)
    agree(xp.nn.layer_norm(xg, 20000), xp.nn.layer_norm(xc, 20000), dtype, scale=10)


def test_index_errors_are_found_on_the_device() -> None:
    x = xp.zeros((1000, 8), dtype=xp.float32, device=GPUS[0])
    idx = np.zeros((1000, 8), np.int64)
    idx[777, 3] = 1000
    with pytest.raises(IndexError, match="size 1000"):
        xp.nn.gather(x, 0, xp.asarray(idx, device=GPUS[0]))
    with pytest.raises(IndexError):
        xp.nn.scatter_add(x, 0, xp.asarray(idx, device=GPUS[0]), x)
    ok = xp.nn.gather(x, 0, xp.asarray(np.minimum(idx, 999), device=GPUS[0]))  # the device is still usable
    assert host(ok).shape == (1000, 8)
