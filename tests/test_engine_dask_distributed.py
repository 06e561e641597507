"""Dask distributed with rocm_array chunks in worker processes, through ``LocalGPUCluster``.

Two layouts, one cluster each for the whole module: ``cpu`` (two worker processes on the host,
which CI runs) and ``gpu`` (one worker per GPU, each with its own card as its default device; it
needs two GPUs, or the simulator with two devices: ``ROCM_ARRAY_PLATFORM=sim
ROCM_ARRAY_SIM_DEVICES=2``, and skips with the reason elsewhere). The same tests run on both:
Dask's operations, rechunking by tasks and by P2P, persist, a chunk arriving on the receiving
worker's device through the serializers (no pickle), and, on GPUs, spilling past the device
memory limit.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import rocm_array as xp
from rocm_array import devices, runtime
from rocm_array.distributed import ipc
from rocm_array.distributed.serialize import arrival

from engines import assert_on, to_numpy

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from rocm_array.distributed import DeviceHostFile, LocalGPUCluster  # noqa: E402  (needs distributed)
from test_engine_dask import CASES, H  # noqa: E402  (the threaded tests' cases and data)

PLATFORM, GPU_COUNT = runtime.count()
#: What a worker of the gpu layout keeps on its GPU before spilling (small: the spill test passes it
#: quickly, the other tests stay well below it).
SPILL_LIMIT = 24 << 20
#: The simulator's device memory in the workers: the spill test stores more than this on each.
SIM_MEMORY = 64 << 20
#: The spill test's chunks: 4 MiB of float32 each, 80 MiB per worker.
SPILL_CHUNK, SPILL_CHUNKS = 1 << 20, 40


class Setup:
    def __init__(self, client: Any, mode: str) -> None:
        self.client, self.mode = client, mode
        self.workers = sorted(client.scheduler_info()["workers"], key=lambda a: client.scheduler_info()["workers"][a]["name"])
        # Chunks made here start on this process's device of the layout's kind.
        self.here = "cpu" if mode == "cpu" else str(arrival("gpu"))


@pytest.fixture(scope="module", params=["cpu", "gpu"])
def cluster(request: pytest.FixtureRequest) -> Iterator[Setup]:
    mode = request.param
    env: dict[str, str] = {}
    if mode == "gpu":
        if GPU_COUNT < 2:
            pytest.skip(f"one worker per GPU needs 2 GPUs; {GPU_COUNT} found "
                        f"({PLATFORM or 'no GPU platform'}): on the simulator, ROCM_ARRAY_PLATFORM=sim ROCM_ARRAY_SIM_DEVICES=2")
        if PLATFORM == "sim":
            env["ROCM_ARRAY_SIM_MEMORY"] = str(SIM_MEMORY)
        env[ipc.MIN_VAR] = "0"  # (the tests' chunks are small; every one crosses through IPC)
    with LocalGPUCluster(2, devices=mode, device_memory_limit=SPILL_LIMIT, env=env, dashboard_address=None,
                         silence_logs=40) as c, distributed.Client(c) as client:
        yield Setup(client, mode)


def _no_blas(setup: Setup, case: str) -> None:
    if setup.mode == "gpu" and PLATFORM == "sim" and case in ("matmul", "dot"):
        pytest.skip("the simulator has no BLAS (matmul is a vendor-library path)")


@pytest.mark.parametrize("case", ["elementwise", "sum", "sum_axis", "mean_axis", "std", "var_axis", "max", "argmax",
                                  "nanmean", "map_blocks", "blockwise", "matmul", "dot", "slice", "concatenate", "cumsum"])
def test_operations(cluster: Setup, case: str) -> None:
    _no_blas(cluster, case)
    f, ref = CASES[case]
    d = da.from_array(xp.asarray(H, device=cluster.here), chunks=(10, 15))
    assert_on(cluster.client.compute(f(d)).result(), ref(H), cluster.here)


def _host_copies(allow: bool) -> None:
    if allow:
        os.environ["ROCM_ARRAY_HOST_COPY"] = "1"
    else:
        os.environ.pop("ROCM_ARRAY_HOST_COPY", None)


@pytest.mark.parametrize("method", ["tasks", "p2p"])
def test_rechunk(cluster: Setup, method: str) -> None:
    """Rows to columns: every output chunk takes a piece of every input chunk, on both workers.

    P2P sizes its shards with ``memoryview(shard)``: an Array answers through ``__buffer__``
    (Python 3.12), on ``np.asarray``'s rules, so GPU chunks (and cpu ones under the strict-host
    switch) need ROCM_ARRAY_HOST_COPY=1 there."""
    if method == "p2p" and sys.version_info < (3, 12):
        pytest.skip("P2P rechunking reads shards through the buffer protocol, which a Python class "
                    "provides from Python 3.12 (PEP 688)")
    d = da.from_array(xp.asarray(H, device=cluster.here), chunks=(10, 30))
    copies = method == "p2p" and (cluster.mode == "gpu" or os.environ.get("ROCM_ARRAY_STRICT_HOST") == "1")
    if copies:
        cluster.client.run(_host_copies, True)
    try:
        with dask.config.set({"array.rechunk.method": method}):
            r = d.rechunk((40, 6))
            assert_on(cluster.client.compute(r).result(), H, cluster.here)
            assert_on(cluster.client.compute((r * 2).sum(axis=0)).result(), 2 * H.sum(0), cluster.here)
    finally:
        if copies:
            cluster.client.run(_host_copies, False)


def test_chunks_between_gpu_workers_cross_through_ipc(cluster: Setup) -> None:
    """Workers of one machine hand each other chunks GPU to GPU (``ipc``): every worker sends and
    receives that way in a rechunk between them, and none gets bytes for a reason."""
    if cluster.mode != "gpu":
        pytest.skip("IPC is between GPU workers")
    before = cluster.client.run(ipc.stats)
    d = da.from_array(xp.asarray(H, device=cluster.here), chunks=(10, 30))
    with dask.config.set({"array.rechunk.method": "tasks"}):
        r = d.rechunk((40, 6)).persist()
        assert_on(cluster.client.compute((r * 2).sum(axis=0)).result(), 2 * H.sum(0), cluster.here)
    after = cluster.client.run(ipc.stats)
    for worker in cluster.workers:
        grew = {k: v - before[worker].get(k, 0) for k, v in after[worker].items()}
        assert grew.get("sent", 0) > 0 and grew.get("received", 0) > 0, grew
        assert not [k for k, v in grew.items() if k.startswith("bytes:") and v], grew


def _block(block_info: Any = None, n: int = SPILL_CHUNK) -> xp.Array:
    """Chunk i of a generated array, made on the worker: i + 0, 1, …, n-1 (float32, exact)."""
    i = block_info[None]["chunk-location"][0]
    return xp.astype(xp.arange(n, dtype=xp.int64) % 1024 + i, xp.float32)


def _generated(chunks: int, n: int) -> Any:
    meta = xp.asarray(np.empty(0, np.float32), device="cpu")
    return da.map_blocks(_block, n=n, chunks=((n,) * chunks,), dtype=np.float32, meta=meta)


def _generated_sum(chunks: int, n: int) -> float:
    per = np.arange(n) % 1024
    return float(sum(per.sum() + i * n for i in range(chunks)))


def test_persist(cluster: Setup) -> None:
    """Chunks made on the workers stay there, on each worker's device, between computations."""
    x = _generated(8, 1000).persist()
    distributed.wait(x)
    held = cluster.client.who_has(x)
    assert {w for ws in held.values() for w in ws} == set(cluster.workers)  # spread over both
    kinds = cluster.client.run(lambda dask_worker: sorted({str(v.device) for v in dask_worker.data.values()
                                                           if isinstance(v, xp.Array)}))
    want = "cpu" if cluster.mode == "cpu" else "gpu:0"  # each worker's default device
    assert all(k == [want] for k in kinds.values()), kinds
    total = cluster.client.compute(x.sum()).result()
    assert_on(total, _generated_sum(8, 1000), cluster.here)
    assert_on(cluster.client.compute((x * 2).sum()).result(), 2 * _generated_sum(8, 1000), cluster.here)


def _make(n: int) -> xp.Array:
    return xp.astype(xp.arange(n), xp.float32)


def _where(chunk: xp.Array) -> dict[str, Any]:
    """Where a chunk a task received is, and what this worker's own device is."""
    var = runtime.VISIBLE_VAR.get(PLATFORM, "")
    own = devices.default()
    return {"device": str(chunk.device), "default": str(own), "first_visible": os.environ.get(var, "").split(",")[0],
            "name": own.runtime.properties.name if own.kind == "gpu" else "cpu",
            "total": float(to_numpy(xp.sum(chunk)))}


_SAVED: dict[str, Any] = {}


def _refused(self: xp.Array) -> Any:
    raise AssertionError("a rocm_array chunk was pickled; the serializers should have carried it")


def _refuse_pickle(refuse: bool) -> None:
    """In a worker: make pickling a rocm_array array fail, or undo that."""
    from rocm_array.array import Array

    if refuse:
        _SAVED["reduce"] = Array.__dict__["__reduce__"]
        Array.__reduce__ = _refused
    else:
        Array.__reduce__ = _SAVED.pop("reduce")


def test_chunk_arrives_on_the_receivers_device_through_the_serializers(cluster: Setup) -> None:
    client, (a, b) = cluster.client, cluster.workers
    client.run(_refuse_pickle, True)
    try:
        made = client.submit(_make, 1 << 16, workers=[a], pure=False)
        seen = client.submit(_where, made, workers=[b]).result()
        back = made.result()  # to this process, through the same serializers
    finally:
        client.run(_refuse_pickle, False)
    assert seen["device"] == seen["default"]  # arrived on the receiving worker's default device
    assert seen["total"] == float(np.arange(1 << 16, dtype=np.float32).sum())
    assert_on(back, np.arange(1 << 16, dtype=np.float32), cluster.here)
    if cluster.mode == "gpu":
        assert seen["default"] == "gpu:0"
        mine = client.run(lambda: os.environ.get(runtime.VISIBLE_VAR[PLATFORM], "").split(",")[0])
        assert seen["first_visible"] == mine[b] != mine[a]  # b's own card, not a's
        if PLATFORM == "sim":
            assert seen["name"].startswith(f"rocm_array simulator {mine[b]},")
    header, frames = distributed.protocol.serialize(back)
    assert header["serializer"] == "dask" and len(frames) == 1


def test_spilling(cluster: Setup) -> None:
    """Each worker stores 80 MiB of chunks (on the simulator, more than its 64 MiB device): past
    SPILL_LIMIT they spill to host memory, and come back for the sum."""
    if cluster.mode == "cpu":
        pytest.skip("cpu chunks are host memory already: nothing to spill")
    data = cluster.client.run(lambda dask_worker: type(dask_worker.data).__name__)
    assert set(data.values()) == {"DeviceHostFile"}
    x = _generated(SPILL_CHUNKS, SPILL_CHUNK).persist()
    distributed.wait(x)
    state = cluster.client.run(lambda dask_worker: (dask_worker.data.spills, dask_worker.data.device_bytes,
                                                     dask_worker.data.limit))
    for spills, held, limit in state.values():
        assert limit == SPILL_LIMIT and spills > 0 and held <= SPILL_LIMIT, state
    assert_on(cluster.client.compute(x.sum()).result(), _generated_sum(SPILL_CHUNKS, SPILL_CHUNK), cluster.here)
    back = cluster.client.run(lambda dask_worker: dask_worker.data.unspills)
    assert all(n > 0 for n in back.values()), back
    del x


# -- the pieces, in this process ------------------------------------------------------------------

def test_device_host_file(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Values over the limit spill to host bytes and come back equal, on the default device."""
    home = devices.default()
    if str(home) != device:
        pytest.skip(f"DeviceHostFile keeps chunks on the default device ({home})")
    data = DeviceHostFile(device_memory_limit=3 * 4096)
    arrays = {f"k{i}": xp.astype(xp.arange(1024) + i, xp.float32) for i in range(6)}
    for k, v in arrays.items():
        data[k] = v
    data["meta"] = {"not": "an array"}
    data["parts"] = (arrays["k0"], {"n": arrays["k1"]})  # a reduction's partial result
    assert len(data) == 8 and "meta" in data and set(data) == {*arrays, "meta", "parts"}
    if home.kind == "gpu":
        assert data.limit == 3 * 4096 and data.spills >= 4 and data.device_bytes <= 3 * 4096
    else:
        assert data.limit == 0 and data.spills == 0  # host memory: nothing to spill
    for k, v in arrays.items():
        got = data[k]
        assert got.device == home
        np.testing.assert_array_equal(to_numpy(got), to_numpy(v))
    a, b = data["parts"]
    np.testing.assert_array_equal(to_numpy(b["n"]), to_numpy(arrays["k1"]))
    del data["k0"], data["meta"]
    assert "k0" not in data and len(data) == 6


def test_device_memory_limit_forms() -> None:
    from rocm_array.distributed.spill import device_limit

    total = 1000 << 20
    assert device_limit(0.5, total) == 500 << 20 and device_limit("0.25", total) == 250 << 20
    assert device_limit(4096, total) == 4096 and device_limit("10 MiB", total) == 10 << 20
    assert device_limit(0, total) == 0 and device_limit(None, total) == 0
    for bad in ("lots", -1, True):
        with pytest.raises(ValueError, match="device_memory_limit"):
            device_limit(bad, total)


def test_worker_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker k sees every GPU, its own first; the variable already narrowing them is kept."""
    from rocm_array.distributed.placement import worker_env

    ids = ["0", "1", "2", "3"]
    assert worker_env(1, "nvidia", ids) == {"CUDA_VISIBLE_DEVICES": "1,2,3,0", "ROCM_ARRAY_DEVICE": "gpu:0"}
    assert worker_env(3, "amd", ids)["HIP_VISIBLE_DEVICES"] == "3,0,1,2"
    assert worker_env(0, "sim", ["2", "5"])["HIP_VISIBLE_DEVICES"] == "2,5"


def test_cluster_arguments() -> None:
    with pytest.raises(ValueError, match="processes=False"):
        LocalGPUCluster(2, devices="cpu", processes=False)
    with pytest.raises(ValueError, match="needs n_workers"):
        LocalGPUCluster(devices="cpu")
    with pytest.raises(ValueError, match="'gpu' or 'cpu'"):
        LocalGPUCluster(2, devices="tpu")
    if GPU_COUNT:
        with pytest.raises(ValueError, match="one worker per GPU"):
            LocalGPUCluster(GPU_COUNT + 1)


def test_nanny_preload_refuses_a_worker() -> None:
    from rocm_array.distributed import dask_setup

    with pytest.raises(TypeError, match="scheduler or nanny preload"):
        dask_setup(object())


@contextlib.contextmanager
def _dask_commands(tmp_path: Any, env: dict[str, str]) -> Iterator[Callable[..., None]]:
    """``start(command, *args)`` runs ``python -m distributed.cli.<command> *args`` in ``tmp_path``
    with ``env``, its log in ``tmp_path / "dask.log"`` (to read when a test fails); every process
    started is stopped on leaving, the last first."""
    import subprocess

    procs: list[subprocess.Popen[bytes]] = []
    with open(tmp_path / "dask.log", "w") as log:
        def start(command: str, *args: str) -> None:
            procs.append(subprocess.Popen([sys.executable, "-m", f"distributed.cli.{command}", "--no-dashboard", *args],
                                          env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=log))
        try:
            yield start
        finally:
            for p in reversed(procs):
                p.terminate()
                p.wait(timeout=60)


def test_dask_worker_with_the_nanny_preload(tmp_path: Any) -> None:
    """``dask worker --nworkers 2 --preload-nanny rocm_array.distributed``: each worker its own GPU
    first, ROCM_ARRAY_DEVICE=gpu:0, a DeviceHostFile with ROCM_ARRAY_DEVICE_MEMORY_LIMIT."""
    if GPU_COUNT < 2:
        pytest.skip(f"needs 2 GPUs; {GPU_COUNT} found: on the simulator, ROCM_ARRAY_PLATFORM=sim ROCM_ARRAY_SIM_DEVICES=2")
    var = runtime.VISIBLE_VAR[PLATFORM]
    here = os.path.dirname(os.path.abspath(__file__))  # the tasks' functions are this module's
    env = {**os.environ, "ROCM_ARRAY_DEVICE_MEMORY_LIMIT": "12 MiB",
           "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    env.pop(var, None)
    with distributed.LocalCluster(n_workers=0, dashboard_address=None, silence_logs=40) as c, \
            distributed.Client(c) as client, _dask_commands(tmp_path, env) as start:
        start("dask_worker", c.scheduler_address, "--nworkers", "2", "--nthreads", "1",
              "--preload-nanny", "rocm_array.distributed")
        client.wait_for_workers(2, timeout=120)
        seen = client.run(lambda dask_worker: (os.environ.get(var), os.environ.get("ROCM_ARRAY_DEVICE"),
                                               type(dask_worker.data).__name__, dask_worker.data.limit))
        firsts = sorted(v[0].split(",")[0] for v in seen.values())
        assert firsts == ["0", "1"], seen
        assert all(v[1:] == ("gpu:0", "DeviceHostFile", 12 << 20) for v in seen.values()), seen
        x = _generated(4, 1000)
        assert_on(client.compute(x.sum()).result(timeout=60), _generated_sum(4, 1000), str(arrival("gpu")))


def _owner_changes(client: Any, x: Any) -> tuple[int, list[str]]:
    """How often the worker changes along x's chunks in numeric order, and the owners."""
    who = client.who_has(x)
    owners = [next(iter(who[(x.name, i, 0)])) for i in range(x.numblocks[0])]
    return sum(a != b for a, b in zip(owners, owners[1:])), owners


def _drawn(n: int) -> Any:
    return da.map_blocks(lambda block_info=None: xp.full((4, 4), float(block_info[None]["chunk-location"][0])),
                         chunks=((4,) * n, (4,)), dtype=np.float64, meta=xp.empty((0, 0), device="cpu"))


def test_root_tasks_go_in_numeric_runs_so_neighbours_reduce_on_one_worker(cluster: Setup) -> None:
    """Chunks drawn on the workers from nothing go in one run of neighbours a worker, in the numeric
    order of their indices (``neighbours.NeighbourRuns``), so a tree reduction over neighbours
    crosses workers once. Without the plugin, Dask's runs follow the keys as text (chunk 10 before
    chunk 2: 3 changes over 32 chunks); with its default worker-saturation, neighbours alternate."""
    from rocm_array.distributed.cluster import WORKER_SATURATION

    assert cluster.client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION) \
        == WORKER_SATURATION
    x = _drawn(32).persist()
    distributed.wait(x)
    changes, owners = _owner_changes(cluster.client, x)
    assert len(set(owners)) == 2 and changes == 1, owners
    first = cluster.client.run_on_scheduler(lambda dask_scheduler: min(
        dask_scheduler.workers.values(), key=lambda ws: ws.name).address)
    assert owners[0] == first  # worker 0 takes the first run


def test_neighbour_runs_leave_other_tasks_alone() -> None:
    from rocm_array.distributed.neighbours import _chunk_index

    assert _chunk_index(("x-1", 10, 0)) == (10, 0)
    for key in ("x-1", ("x-1",), ("x-1", "a"), ("x-1", True), (1, 2)):
        assert _chunk_index(key) is None, key


def test_dask_scheduler_with_the_preload(tmp_path: Any) -> None:
    """``dask scheduler --preload rocm_array.distributed``: the same runs of neighbours as
    ``LocalGPUCluster``'s scheduler, for workers started on their own (here two on the host)."""
    from rocm_array.distributed.neighbours import NeighbourRuns

    sched_file = tmp_path / "sched.json"
    with _dask_commands(tmp_path, {**os.environ, "ROCM_ARRAY_DEVICE": "cpu"}) as start:
        start("dask_scheduler", "--scheduler-file", str(sched_file), "--preload", "rocm_array.distributed")
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        start("dask_worker", "--scheduler-file", str(sched_file), "--nworkers", "2", "--nthreads", "1")
        with distributed.Client(scheduler_file=str(sched_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            assert client.run_on_scheduler(lambda dask_scheduler: (
                dask_scheduler.WORKER_SATURATION, NeighbourRuns.name in dask_scheduler.plugins)) \
                == (float("inf"), True)
            x = _drawn(32).persist()
            distributed.wait(x)
            changes, owners = _owner_changes(client, x)
            assert len(set(owners)) == 2 and changes == 1, owners


def test_a_worker_stays_at_most_run_ahead_results_ahead_of_its_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Storing a GPU result queues its deferred work and marks the stream after it; the store waits
    for the mark ``RUN_AHEAD`` results back, so a chunk another worker asks for is not downloaded
    behind a whole graph's queued work. Host values mark nothing."""
    import itertools

    from helpers import RecordingDriver
    from rocm_array import dtypes, fusion, memory
    from rocm_array.devices import Device
    from rocm_array.distributed import spill
    from rocm_array.runtime.gpu import GpuRuntime

    class Marks(RecordingDriver):
        def __init__(self) -> None:
            super().__init__()
            self.log: list[tuple[str, int]] = []
            self._ids = itertools.count()

        def event_create(self) -> int:
            return next(self._ids)

        def event_record(self, event: int) -> None:
            self.log.append(("record", event))

        def event_synchronize(self, event: int) -> None:
            self.log.append(("wait", event))

        def event_destroy(self, event: int) -> None:
            pass

    driver = Marks()
    gpu = Device("gpu", 0, GpuRuntime(driver))
    monkeypatch.setattr(devices, "default", lambda: gpu)
    queued: list[Any] = []
    monkeypatch.setattr(fusion, "compute", lambda x: queued.append(x) or x)
    data = DeviceHostFile(device_memory_limit=0)
    chunks = [memory.empty((16,), dtypes.float32, gpu) for _ in range(4)]
    data["a"], data["meta"] = chunks[0], {"n": 1}
    data["b"], data["parts"] = chunks[1], [chunks[2], {"x": chunks[3]}]
    assert spill.RUN_AHEAD == 2
    recorded = [e for what, e in driver.log if what == "record"]
    assert [what for what, _ in driver.log] == ["record"] * 3 + ["wait"] and len(set(recorded)) == 3
    assert driver.log[-1] == ("wait", recorded[0])
    assert queued == chunks  # (the nested partial results too)
