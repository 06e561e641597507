"""Copies between two GPUs of one process (``to_device("gpu:1")``): a peer copy where the platform
allows it, else through the host; ``python -m rocm_array info`` says which.

The in-process tests need two GPUs. Where this process has fewer, the same tests run in a child
process on the simulator with two devices (``ROCM_ARRAY_SIM_DEVICES=2``), so the peer path and the
staged one run without a GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rocm_array as xp
from rocm_array import devices, memory
from rocm_array.runtime import sim
from rocm_array.runtime.gpu import PEER_VAR
from rocm_array.runtime.protocol import DriverError

GPUS = devices.gpus()
two_gpus = pytest.mark.skipif(len(GPUS) < 2, reason=f"{len(GPUS)} GPU(s) in this process: a peer copy needs two "
                                                    "(the simulator's two devices run these in a child process)")


@pytest.fixture(params=["peer", "staged"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each pair's route decided afresh, with peer copies allowed or turned off by ROCM_ARRAY_PEER."""
    if request.param == "staged":
        monkeypatch.setenv(PEER_VAR, "0")
    else:
        monkeypatch.delenv(PEER_VAR, raising=False)
    for d in GPUS:
        monkeypatch.setattr(d.runtime, "_routes", {})
    return str(request.param)


@two_gpus
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "bool", "complex64", "bfloat16"])
def test_to_other_gpu(route: str, dtype: str) -> None:
    a, b = GPUS[0], GPUS[1]
    host = (np.arange(-500, 1500) % 7 - 3).astype(np.float64)
    x = xp.asarray(host, device=a)
    x = xp.astype(x, getattr(xp, dtype))
    y = x.to_device(b)
    assert y.device == b and y.dtype == x.dtype
    want = memory.to_host(x)  # (bfloat16 has no DLPack code in NumPy)
    np.testing.assert_array_equal(memory.to_host(y), want)
    went = a.runtime.peer_route(b.runtime)
    assert went.direct == (route == "peer") or "no peer access" in went.why, went
    back = y.to_device(a)  # and the other way
    np.testing.assert_array_equal(memory.to_host(back), want)


@two_gpus
def test_views_and_deferred_results(route: str) -> None:
    a, b = GPUS[0], GPUS[1]
    host = np.random.default_rng(1).standard_normal((64, 48)).astype(np.float32)
    x = xp.asarray(host, device=a)
    for got, want in [(x[3:40:2, ::-3], host[3:40:2, ::-3]), (x.T, host.T), (xp.exp(x) * 2 + 1, np.exp(host) * 2 + 1),
                      (x[:0], host[:0]), (x[5, 7], host[5, 7])]:
        moved = got.to_device(b)
        assert moved.device == b and moved.shape == want.shape
        np.testing.assert_allclose(np.from_dlpack(moved.to_device("cpu")), want, rtol=1e-6)
    # the copy is usable at once on the receiving device
    np.testing.assert_allclose(np.from_dlpack(xp.sum(x.to_device(b)).to_device("cpu")), host.sum(), rtol=1e-4)


@two_gpus
def test_route_is_reported(route: str) -> None:
    from rocm_array.__main__ import main
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["info"])
    text = out.getvalue()
    assert "copies between GPUs (to_device):" in text
    assert ("gpu:0 -> gpu:1: peer copy" in text) == GPUS[0].runtime.peer_route(GPUS[1].runtime).direct
    if route == "staged":
        assert f"staged through the host ({PEER_VAR}=0)" in text


@two_gpus
def test_large_copy_crosses_staging_chunks(route: str) -> None:
    """More than two pinned chunks of the staged path (32 MiB each), so both buffers are reused."""
    a, b = GPUS[0], GPUS[1]
    n = (80 << 20) // 4 + 3
    x = xp.arange(n, dtype=xp.int32, device=a)
    y = x.to_device(b)
    got = np.from_dlpack(y.to_device("cpu"))
    assert got[0] == 0 and got[-1] == n - 1 and np.array_equal(got[::4099], np.arange(0, n, 4099))


def _simulator_missing() -> str:
    try:
        sim.find_compiler()
        return ""
    except DriverError as exc:
        return str(exc)


@pytest.mark.skipif(len(GPUS) >= 2, reason="this process has two GPUs: the tests above ran on them")
@pytest.mark.skipif(bool(_simulator_missing()), reason=f"no simulator: {_simulator_missing()}")
def test_on_two_simulated_devices() -> None:
    env = {**os.environ, "ROCM_ARRAY_PLATFORM": "sim", "ROCM_ARRAY_SIM_DEVICES": "2", "ROCM_ARRAY_DEVICE": "gpu:0"}
    env.pop("HIP_VISIBLE_DEVICES", None)
    done = subprocess.run([sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider",
                           "-k", "not simulated"], env=env, capture_output=True, text=True,
                          cwd=Path(__file__).parent, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1], done.stdout[-2000:]


def test_simulated_devices_follow_hip_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator's devices are numbered and narrowed by HIP_VISIBLE_DEVICES, as AMD GPUs are."""
    monkeypatch.setenv("ROCM_ARRAY_SIM_DEVICES", "3")
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "2,0")
    assert sim.count_devices() == 2 and sim._visible() == [2, 0]
    monkeypatch.delenv("HIP_VISIBLE_DEVICES")
    assert sim._visible() == [0, 1, 2]
    for bad in ("3", "1,1", "a"):
        monkeypatch.setenv("HIP_VISIBLE_DEVICES", bad)
        with pytest.raises(DriverError, match="HIP_VISIBLE_DEVICES"):
            sim.count_devices()
