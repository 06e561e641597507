"""The benchmark harness's pure parts, without a GPU: the case table, the measurement loop on a
NumPy stand-in library, and the figures, table and JSON from synthetic numbers."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is a folder of the repository

from benchmarks import cases, report  # noqa: E402
from benchmarks.cases import NA, Case, Input, NotAvailable, Work  # noqa: E402
from benchmarks.libs import LIBRARIES, Library  # noqa: E402
from benchmarks.measure import HostData, Settings, measure, sets_needed, sets_of  # noqa: E402
from benchmarks.run import main  # noqa: E402


def test_case_table_integrity() -> None:
    names = [c.name for c in cases.CASES]
    assert len(names) == len(set(names))
    for c in cases.CASES:
        assert c.kind in cases.KINDS, c.name
        if c.kind in cases.IN_PROCESS:
            assert (c.inputs or c.setup) and c.ops, c.name  # a draw's case has a setup (generators), no inputs
            for lib in LIBRARIES:
                try:
                    assert callable(c.op(lib))
                except NotAvailable as e:
                    assert str(e), c.name
        if c.kind == "device":
            assert c.work.ceiling is not None, c.name
        for spec in c.inputs:
            assert spec.dtype in cases.ITEMSIZE and spec.fill in ("uniform", "spd", "classes")
            assert (spec.fill == "classes") == spec.dtype.startswith("int"), c.name
    # Every ceiling a case is compared with is set by a case in the table.
    set_by = {c.work.ceiling for c in cases.CASES if c.ceiling}
    assert {c.work.ceiling for c in cases.CASES if c.kind == "device"} <= set_by
    required = {"copy", "add", "multiply", "add_broadcast", "add_transposed", "chain5", "copy_transposed", "sum",
                "sum_axis0", "sum_axis1", "sort", "argsort", "bmm_float32", "max_pool2d", "softmax", "tiny_add",
                "import", "first_call_cold", "first_call_warm", "fill", "random_uniform", "random_normal",
                "sklearn_pca_eigh", "sklearn_lda", "sklearn_pca_randomized", "fused_chain", "fused_chain_compiled",
                "fused_chain_sum", "fused_chain_sum_compiled", "softmax_plain", "softmax_plain_compiled",
                "layernorm_plain", "layernorm_plain_compiled", "axpy_loop",
                "axpy_loop_eager", "jacobi_loop", "silu", "silu_of_scaled", "elu",
                *(f"matmul_{dt}" for dt in ("float32", "float16", "bfloat16", "float64"))}
    assert required <= set(names)


def test_work_counts() -> None:
    add = cases.BY_NAME["add"]
    assert add.work.bytes == 3 * 4 * 2**28 and add.work.ceiling == "copy"
    mm = cases.BY_NAME["matmul_bfloat16"]
    assert mm.work.flops == 2 * 8192**3 and mm.work.ceiling == "gemm:bfloat16"
    assert cases.BY_NAME["conv2d_float32"].work.flops == 2 * 32 * 128 * 56 * 56 * 64 * 9


def test_jacobi_loop_sweeps_a_copy() -> None:
    """200 Jacobi sweeps (NumPy stands in for the libraries): the interior relaxes toward the mean of
    its neighbours, the edges stay, and the input is not written."""
    u = np.random.default_rng(0).random((16, 16), dtype=np.float32)
    before = u.copy()
    out = cases._jacobi_loop(SimpleNamespace(name="cupy", ns=np, to_host=np.asarray), u)
    np.testing.assert_array_equal(u, before)
    np.testing.assert_array_equal(out[[0, -1]], u[[0, -1]])
    np.testing.assert_array_equal(out[:, [0, -1]], u[:, [0, -1]])

    def residual(g: np.ndarray) -> float:
        return float(np.abs((g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]) * 0.25 - g[1:-1, 1:-1]).max())

    assert residual(out) < residual(u) / 100


def test_layernorm_plain_normalizes_rows() -> None:
    """The array-API spelling (rocm_array's and CuPy's; NumPy stands in): each row's mean 0, variance
    var / (var + eps)."""
    x = np.random.default_rng(0).random((4, 64), dtype=np.float32)
    y = cases._layernorm_plain(SimpleNamespace(name="cupy", ns=np), x)
    var = x.var(axis=-1)
    assert np.allclose(y.mean(axis=-1), 0, atol=1e-6)
    assert np.allclose(y.var(axis=-1), var / (var + cases.LAYERNORM_EPS), rtol=1e-4)


def test_select() -> None:
    assert cases.select(None) == list(cases.CASES)
    assert [c.name for c in cases.select("sum, add")] == ["sum", "add"]
    with pytest.raises(ValueError, match="nope"):
        cases.select("add,nope")
    assert [c.name for c in cases.ceilings_for(cases.select("sum,matmul_float16,tiny_add"))] == [
        "copy", "matmul_float16"]


def test_na_op() -> None:
    conv = cases.BY_NAME["conv2d_float32"]
    with pytest.raises(NotAvailable, match="CuPy has no conv2d"):
        conv.op("cupy")
    with pytest.raises(NotAvailable):
        Case("x", ops={"*": NA("nothing")}).op("torch")


def test_rotating_sets_exceed_l2() -> None:
    s = Settings(l2_bytes=60 << 20)
    assert sets_needed(cases.BY_NAME["add"], s) == 1
    bmm = cases.BY_NAME["bmm_float32"]
    n = sets_needed(bmm, s)
    assert n * sum(i.nbytes for i in bmm.inputs) >= 4 * s.l2_bytes > (n - 1) * sum(i.nbytes for i in bmm.inputs)


def test_host_data_fresh_and_distinct() -> None:
    d = HostData(seed=1)
    spec = Input((64,))
    a, b, a2 = d.get(spec, 0, 0), d.get(spec, 0, 1), d.get(spec, 1, 0)
    assert a.dtype == np.float32 and np.all(a != 0)
    assert not np.array_equal(a, b) and not np.array_equal(a, a2)
    assert d.get(spec, 0, 0) is a
    spd = d.get(Input((8, 8), "float64", "spd"), 0, 0)
    assert np.array_equal(spd, spd.T) and np.all(np.linalg.eigvalsh(spd) > 0)


def test_host_data_made_ahead_is_what_get_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """HostData.prefetch makes every input of the cases on a thread (each device case's rotating sets,
    one set of the others); get waits for it, then gives those arrays, making none again."""
    s = Settings(l2_bytes=1 << 20)
    chosen = [cases.BY_NAME["tiny_add"], Case("small", inputs=(Input((256, 256)), Input((256,))),
                                              ops={"*": lambda L, x, y: x}, work=Work(bytes=1))]
    d = HostData(seed=2)
    made: list[tuple[int, ...]] = []
    make = d._make
    monkeypatch.setattr(d, "_make", lambda spec: made.append(spec.shape) or make(spec))
    d.prefetch(chosen, s)
    first = d.get(chosen[1].inputs[0], 0, 0)
    sets = sets_of(chosen[1], s)
    assert sets == sets_needed(chosen[1], s) > 1 and sets_of(chosen[0], s) == 1
    assert len(made) == 2 + 2 * sets  # tiny_add's two, then the device case's sets
    assert d.get(chosen[1].inputs[0], 0, 0) is first and len(made) == 2 + 2 * sets
    assert not np.array_equal(first, d.get(chosen[1].inputs[0], 1, 0))


class _Stamp:
    def __init__(self) -> None:
        self.t = 0.0

    def record(self) -> None:
        self.t = time.perf_counter()


class NumpyLib(Library):
    """A host stand-in with the library interface: events are host clock stamps."""

    name, module, title = "torch", "numpy", "NumPy"

    def _open(self, module: Any) -> None:
        self.ns = module

    def _spin_kernel(self) -> Any:
        self.spins: list[int] = []
        return self.spins.append  # the "spin kernel": cycle counts asked for

    def to_device(self, host: np.ndarray, dtype: str) -> Any:
        return host.astype(dtype)

    def to_host(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def event(self) -> Any:
        return _Stamp()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return (end.t - start.t) * 1e3

    def synchronize(self) -> None:
        pass


def test_measure_loop_on_host() -> None:
    lib = NumpyLib()
    case = Case("small_add", inputs=(Input((1000,)),) * 2, ops={"*": lambda L, a, b: a + b}, work=Work(bytes=12000))
    r = measure(lib, case, HostData(), Settings(l2_bytes=16000, budget_ms=2, min_reps=5, max_reps=20))
    assert r.status == "ok" and 5 <= r.reps <= 20 and len(r.times_ms) == r.reps
    assert r.sets == 8 and r.median_ms is not None and r.first_call_ms is not None
    # The reps were queued in batches behind the spin kernel: a calibration pair, then one hold per batch.
    assert len(lib.spins) >= 3 and all(c > 0 for c in lib.spins)
    host = measure(lib, Case("tiny", kind="host", inputs=(Input((16,)),) * 2, ops={"*": lambda L, a, b: a + b}),
                   HostData(), Settings(host_loop=50, process_repeats=2))
    assert host.status == "ok" and len(host.times_ms) == 2
    labels = Input((64,), "int64", "classes")
    work = measure(lib, Case("fit", kind="workload", inputs=(Input((64,)), labels),
                             ops={"*": lambda L, x, y: L.to_host(x * y)}), HostData(), Settings(process_repeats=3))
    assert work.status == "ok" and len(work.times_ms) == 3 and work.first_call_ms is not None
    assert set(np.unique(HostData().get(labels, 0, 0))) <= {0, 1, 2, 3}


def test_measure_reports_na_and_errors() -> None:
    lib = NumpyLib()
    na = measure(lib, Case("x", inputs=(Input((4,)),), ops={"*": NA("not here")}, work=Work(bytes=1)),
                 HostData(), Settings())
    assert (na.status, na.reason) == ("n/a", "not here")

    def boom(L: Any, a: Any) -> Any:
        raise RuntimeError("broken kernel")

    err = measure(lib, Case("y", inputs=(Input((4,)),), ops={"*": boom}, work=Work(bytes=1)), HostData(), Settings())
    assert err.status == "error" and "broken kernel" in err.reason
    missing = measure(lib, Case("z", inputs=(Input((4,)),), ops={"*": lambda L, a: L.ns.no_such_op(a)},
                              work=Work(bytes=1)), HostData(), Settings())
    assert missing.status == "n/a" and "no_such_op" in missing.reason


def _synthetic_run() -> dict[str, Any]:
    def ok(ms: float, first: float = 5.0) -> dict[str, Any]:
        return {"status": "ok", "median_ms": ms, "times_ms": [ms, ms], "first_call_ms": first}

    def rec(name: str, work: dict[str, Any], results: dict[str, Any], kind: str = "device") -> dict[str, Any]:
        return {"name": name, "kind": kind, "note": "", "work": {"bytes": 0, "flops": 0, "dtype": "", **work},
                "results": results}

    recs = [
        rec("copy", {"bytes": 4e9}, {"rocm_array": ok(1.0), "cupy": ok(1.0), "torch": ok(0.8)}),
        rec("add", {"bytes": 3e9}, {"rocm_array": ok(0.75), "cupy": ok(1.5), "torch": ok(0.75)}),
        rec("matmul_float32", {"flops": 2e12, "dtype": "float32"},
            {"rocm_array": {"status": "n/a", "reason": "NotImplementedError: no gpu back"}, "cupy": ok(40.0),
             "torch": ok(50.0)}),
        rec("tiny_add", {}, {"rocm_array": ok(0.004), "cupy": ok(0.006), "torch": {"status": "error",
                                                                                   "reason": "boom"}}, "host"),
    ]
    run = {"env": {"gpu": "Test GPU", "date": "2025-01-01", "commit": "abc"}, "cases": recs}
    run["ceilings"] = report.ceilings(recs, {"copy", "matmul_float32"})
    return run


def test_ceilings_and_ratios() -> None:
    run = _synthetic_run()
    c = run["ceilings"]
    assert c["copy"]["by"] == "torch" and c["copy"]["value"] == pytest.approx(5000.0)
    assert c["gemm:float32"]["by"] == "cupy" and c["gemm:float32"]["value"] == pytest.approx(50.0)
    add = run["cases"][1]
    assert report.ratio(add, "rocm_array", "cupy") == pytest.approx(2.0)
    assert report.ratio(run["cases"][2], "rocm_array", "torch") is None
    assert report.rate(add["work"], 0.75) == (pytest.approx(4000.0), "GB/s")


def test_markdown_and_json(tmp_path: Path) -> None:
    run = _synthetic_run()
    table = report.markdown_table(run)
    lines = table.splitlines()
    assert lines[0] == "| case | work | rocm_array | CuPy | PyTorch | vs CuPy | vs PyTorch |"
    assert len(lines) == 2 + len(run["cases"])
    assert "| add | 3 GB | 750 µs · 4000 GB/s · 80% |" in table and "| 2.00× | 1.00× |" in table
    assert "| matmul_float32 | 2000 GFLOP float32 | n/a | 40 ms · 50 TFLOP/s · 100% |" in table
    assert "4 µs/call" in table and "| error |" in table
    doc = report.document(run)
    assert "Test GPU" in doc and "commit `abc`" in doc and "NotImplementedError: no gpu back" in doc
    assert "## First call" in doc and report.first_call_table(run).count("| 5 ms") == 10
    report.write_json(run, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == run
    assert main(["--report", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "B.md")]) == 0
    assert (tmp_path / "B.md").read_text() == doc
    msg = report.plot(run, tmp_path / "r.png")
    assert msg.startswith("matplotlib is not installed") or (tmp_path / "r.png").stat().st_size > 0


def test_command_without_gpu(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def no_gpu(self: Library) -> None:
        raise NotAvailable("no GPU here")

    monkeypatch.setattr(Library, "load", no_gpu)
    assert main(["--cases", "add,sum"]) == 0
    err = capsys.readouterr().err
    assert "no GPU is present" in err and "nothing to measure" in err
    with pytest.raises(SystemExit):
        main(["--cases", "nope"])


def test_distributed_report() -> None:
    """benchmarks/distributed.py's table: figures, ratios, and each n/a's reason once."""
    from benchmarks import distributed as bench

    ok = lambda s, **kw: {"status": "ok", "s": s, **kw}  # noqa: E731
    na = {"status": "n/a", "reason": "ModuleNotFoundError: cupy"}
    results = {"rocm_array": {1: {"sin2_sum": ok(0.4), "gram": ok(1.0)},
                              2: {"sin2_sum": ok(0.2), "gram": ok(0.5), "rechunk": ok(2.0, moved_gb_per_s=4.0)}},
               "cupy": {n: {c: na for c in ("generate", "sin2_sum", "gram", "rechunk")} for n in (1, 2)},
               "peer": {"route": "peer copy (peer access enabled)",
                        "256 MiB": {"rocm_array": ok(0.001, gb_per_s=268.4), "torch": ok(0.002, gb_per_s=134.2)}}}
    text = bench.report(results, ["rocm_array", "cupy"], [1, 2])
    assert "| sin2_sum | 400.0 ms | 200.0 ms | n/a | n/a | 2.00 | - | - |" in text
    assert "2000.0 ms (4.00 GB/s)" in text
    assert "| 256 MiB | 1.0 ms (268.4 GB/s) | 2.0 ms (134.2 GB/s) | 2.00 |" in text
    assert text.count("ModuleNotFoundError: cupy") == 1


def test_distributed_small_on_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m benchmarks.distributed --device cpu --small``, on two host workers."""
    pytest.importorskip("distributed")
    from benchmarks import distributed as bench

    assert bench.main(["--device", "cpu", "--small", "--workers", "2", "--repeats", "1", "--libs", "rocm_array"]) == 0
    out = capsys.readouterr().out
    for case in ("generate", "sin2_sum", "gram", "rechunk"):
        assert f"| {case} | " in out
    assert "n/a" not in out.split("peer copies")[0], out


# -- the fresh-process cases (benchmarks/processes.py): planning and scheduling, on a virtual clock --

def _plan(monkeypatch: pytest.MonkeyPatch, names: str | None = None) -> Any:
    """The Plan of ``names`` (every fresh-process case when None) on all three libraries, as if installed."""
    from benchmarks import processes

    monkeypatch.setattr(Library, "installed", lambda self: True)
    chosen = [c for c in cases.select(names) if c.kind in processes.KINDS]
    return processes.Plan([(c, lib) for c in chosen for lib in LIBRARIES], Settings(), Path("/cache"))


def test_the_plan_shares_processes_between_cases_that_measure_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.processes import Key

    plan = _plan(monkeypatch, "first_call_cold,first_call_warm,first_add_cold,first_add_warm,first_matmul_warm,"
                              "first_conv2d_cold,import,conv2d_small_from_start")
    jobs = {}
    for job in plan.jobs:
        jobs.setdefault((job.key, job.timed), []).append(job)
    cold, warm = Key("first_call", "rocm_array", "add", "cold"), Key("first_call", "rocm_array", "add", "warm")
    # first_call_* and first_add_* are one a + b: three processes each way, not 3 + 1.
    assert plan.keys[("first_call_cold", "rocm_array")] == plan.keys[("first_add_cold", "rocm_array")] == cold
    assert len(jobs[(cold, True)]) == 3 and len({j.cache for j in jobs[(cold, True)]}) == 3
    # The first cold process fills the warm processes' cache: no process of its own for that.
    first = jobs[(cold, True)][0]
    assert plan.sources[warm] is first and all(j.after is first and j.cache == first.cache for j in jobs[(warm, True)])
    # matmul has no cold case here: one untimed process fills the cache, then three warm ones (a vendor family).
    fill = plan.sources[Key("first_call", "cupy", "matmul", "warm")]
    assert not fill.timed and fill.key.state == "cold" and len(jobs[(Key("first_call", "cupy", "matmul", "warm"), True)]) == 3
    # PyTorch keeps no disk cache: cold and warm are one measurement, without a cache folder.
    torch_add = Key("first_call", "torch", "add")
    assert plan.keys[("first_add_cold", "torch")] == plan.keys[("first_call_warm", "torch")] == torch_add
    assert len(jobs[(torch_add, True)]) == 3 and all(j.cache is None for j in jobs[(torch_add, True)])
    # A library without the op starts no process; the import-timed measurements run alone.
    assert plan.missing[("first_conv2d_cold", "cupy")] == "cupy has no conv2d op"
    assert ("conv2d_small_from_start", "cupy") in plan.missing
    assert all(j.alone == (j.key.command in ("import", "from_start") and j.timed) for j in plan.jobs)
    assert len(jobs[(Key("from_start", "rocm_array", "conv2d_small", "warm"), True)]) == 3
    # An import is read from the from_start processes where the library has them (they import it
    # first, alone): CuPy, without conv2d_small, keeps three import processes of its own.
    assert plan.keys[("import", "torch")] == Key("from_start", "torch", "conv2d_small")
    assert plan.figures[("import", "torch")] == "import_ms" and plan.figures[("conv2d_small_from_start", "torch")] == "first_ms"
    assert not any(j.key.command == "import" and j.key.lib != "cupy" for j in plan.jobs)
    assert len(jobs[(Key("import", "cupy"), True)]) == 3
    # Without the from_start case, an import has processes of its own.
    alone = _plan(monkeypatch, "import")
    assert {j.key for j in alone.jobs} == {Key("import", lib) for lib in LIBRARIES} and len(alone.jobs) == 9


def test_processes_asks_each_measurement_for_at_least_that_many(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--processes 9``: nine processes a fresh-process measurement (a comparison of versions'
    first calls), cold or warm, where a case asks fewer; the fill of a warm one's cache is still one."""
    from benchmarks import processes

    monkeypatch.setattr(Library, "installed", lambda self: True)
    chosen = [c for c in cases.select("first_exp_cold,first_matmul_warm,import") if c.kind in processes.KINDS]
    plan = processes.Plan([(c, lib) for c in chosen for lib in LIBRARIES], Settings(fresh_processes=9), Path("/c"))
    timed: dict[Any, int] = {}
    for job in plan.jobs:
        timed[job.key] = timed.get(job.key, 0) + job.timed
    assert all(n == 9 for n in timed.values() if n)
    assert timed[processes.Key("first_call", "rocm_array", "exp", "cold")] == 9
    assert timed[processes.Key("import", "torch")] == 9
    assert sum(not j.timed for j in plan.jobs) == 2  # rocm_array's and CuPy's matmul cache fills
    with pytest.raises(SystemExit):
        main(["--processes", "0", "--list"])  # (no measurement has no process)


def test_a_full_run_starts_the_processes_the_docstring_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """processes.py's docstring: 115 processes, 46 rocm_array, 41 CuPy, 28 PyTorch (with no retakes)."""
    plan = _plan(monkeypatch)
    counts = {lib: sum(j.key.lib == lib for j in plan.jobs) for lib in LIBRARIES}
    assert counts == {"rocm_array": 46, "cupy": 41, "torch": 28}


def test_a_job_taken_again_gets_a_fresh_cache_and_at_last_runs_alone() -> None:
    from benchmarks.processes import MAX_TRIES, Job, Key

    job = Job(Key("first_call", "cupy", "sort", "cold"), "/c/sort-0")
    again = job.again()
    assert again.cache != job.cache and again.tries == 1 and not again.alone
    for _ in range(MAX_TRIES - 1):
        again = again.again()
    assert again.alone and len({job.cache, again.cache}) == 2
    warm = Job(Key("first_call", "cupy", "sort", "warm"), "/c/sort-0", after=job)
    assert warm.again().cache == warm.cache and warm.again().after is job


def test_earliest_start_keeps_each_call_clear_of_the_other_gpu_spans() -> None:
    from benchmarks.processes import earliest

    busy = [((10.0, 11.0), (10.4, 10.5)), ((12.0, 13.0), (12.4, 12.5))]  # (GPU span, call), absolute
    window = ((1.0, 1.5), (1.2, 1.3))  # a process's own, after its start
    assert earliest(window, busy, now=0.0) == 0.0  # all before the first
    # Its span may overlap another's (10, 11) where it ends before that one's call.
    assert earliest(((9.5, 10.2), (9.6, 9.7)), busy, now=0.0) == 0.0
    # Its span may meet another's exit but not its call, nor its call another's span: after (10, 11).
    assert earliest(((9.5, 10.6), (10.2, 10.3)), busy, now=0.0) == 1.0
    # Too long for the gap: its call comes after the second's exit.
    assert earliest(((9.5, 12.0), (9.8, 9.9)), busy, now=0.0) == pytest.approx(13.0 - 9.8)
    assert earliest(None, busy, now=0.0) == 13.0  # an unknown one: from its start, after all of them
    assert earliest(window, [((5.0, math.inf), (5.0, math.inf))], now=6.0) == math.inf  # wait for one without end


def _simulate(plan: Any, at_once: int, seed: int = 0) -> Any:
    """Drive a Scheduler over ``plan``'s jobs on a virtual clock, each process made up: an import of
    its library's length (a few percent either way), the GPU's opening, its first call (a cold one
    long; the cold sort far longer than any before it, so that its span is underestimated once), a
    second call and exit."""
    from benchmarks.processes import Run, Scheduler

    rng = np.random.default_rng(seed)
    lead = {"rocm_array": 0.5, "cupy": 0.6, "torch": 4.2}

    def process(job: Any, start: float) -> Run:
        k = job.key
        gpu_from = start + lead[k.lib] * rng.uniform(0.95, 1.05)
        if k.command != "first_call":  # the import-timed ones print no spans
            return Run(job, start, gpu_from + 0.4, {"import_ms": 1.0, **({"first_ms": 2.0} if k.command == "from_start" else {})})
        call = 3.0 if (k.family, k.state) == ("sort", "cold") else 0.3 if k.state == "cold" else 0.005
        c0 = gpu_from + 0.25 * rng.uniform(0.9, 1.1)
        return Run(job, start, c0 + call + 0.1, {"first_ms": call * 1e3, "gpu_from": gpu_from, "call": [c0, c0 + call]})

    scheduler = Scheduler(plan.jobs, at_once)
    now, running = 0.0, []
    while not scheduler.done:
        job, at = scheduler.next(now)
        if job is not None:
            scheduler.start(job, now)
            running.append(process(job, now))
            continue
        now = min([r.end for r in running] + [at])
        assert now < math.inf, "the scheduler waits for nothing"
        for run in sorted((r for r in running if r.end <= now), key=lambda r: r.end):
            running.remove(run)
            scheduler.end(run)
    return scheduler


@pytest.mark.parametrize("at_once", [1, 4])
def test_scheduled_processes_keep_every_kept_call_clear_of_other_gpu_work(monkeypatch: pytest.MonkeyPatch,
                                                                           at_once: int) -> None:
    """A full run's processes on a virtual clock: each measurement gets its samples; no kept first call
    overlaps another process's GPU span; never more than ``at_once`` alive; the import-timed ones alone;
    a warm process starts after the one that fills its cache; a sample that met another is taken again."""
    plan = _plan(monkeypatch)
    scheduler = _simulate(plan, at_once)
    runs = scheduler.runs
    planned: dict[Any, int] = {}
    for job in plan.jobs:
        if job.timed:
            planned[job.key] = planned.get(job.key, 0) + 1
    kept: dict[Any, int] = {}
    for r in runs:
        if r.kept and r.job.timed:
            kept[r.job.key] = kept.get(r.job.key, 0) + 1
    assert kept == planned
    for r in runs:
        assert sum(1 for o in runs if o.start <= r.start < o.end) <= at_once
        if r.job.alone:
            assert not any(o is not r and o.start < r.end and r.start < o.end for o in runs)
        if r.kept and r.job.timed and r.call:
            assert not any(o is not r and o.gpu[0] < r.call[1] and r.call[0] < o.gpu[1] for o in runs)
        if r.job.after is not None:
            assert r.start >= next(o.end for o in runs if o.job is r.job.after)
    discarded = [r for r in runs if not r.kept]
    if at_once > 1:
        assert any(r.job.key.family == "sort" and r.job.key.state == "cold" for r in discarded)
    else:
        assert not discarded  # one at a time, nothing can meet
    results = plan.results(runs)
    assert results[("first_sort_cold", "cupy")].status == "ok"
    assert all(r.at_once == 1 for r in results.values() if r.status == "ok") or at_once > 1
    assert results[("first_conv2d_warm", "cupy")].status == "n/a"
    assert results[("first_add_warm", "torch")].reason == "no disk kernel cache: cold and warm are the same"
    assert (results[("import", "torch")].median_ms, results[("conv2d_small_from_start", "torch")].median_ms) == (1.0, 2.0)
    assert results[("import", "cupy")].reps == 3 and results[("import", "rocm_array")].reps == 3


def test_an_import_read_from_from_start_processes_counts_where_their_op_was_not_available(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.processes import Run

    plan = _plan(monkeypatch, "import,conv2d_small_from_start")
    runs = [Run(job, 0.0, 1.0, {"na": "no cuDNN", "import_ms": 4.0 + i} if job.key.lib == "torch" else
                {"error": "it failed"} if job.key.lib == "rocm_array" else {"import_ms": 1.0}, kept=True)
            for i, job in enumerate(plan.jobs)]
    results = plan.results(runs)
    assert results[("conv2d_small_from_start", "torch")].status == "n/a"
    assert results[("import", "torch")].status == "ok" and results[("import", "torch")].reps == 3
    # A process that failed before its import had ended says so for both.
    assert results[("import", "rocm_array")].status == results[("conv2d_small_from_start", "rocm_array")].status == "error"


def test_at_once_is_at_least_one() -> None:
    from benchmarks.processes import AT_ONCE, processes_arg

    assert processes_arg("4") == 4 and 1 <= AT_ONCE <= 4
    with pytest.raises(ValueError):
        processes_arg("0")  # no process could ever start


def test_run_jobs_runs_each_job_through_its_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_jobs``'s loop with a launcher that ends each process at once (no child, nothing timed)."""
    from benchmarks.processes import Run, run_jobs

    plan = _plan(monkeypatch, "first_add_cold,first_add_warm,import")
    launched = []

    def launch(job: Any, ended: Any) -> None:
        launched.append(job)
        t = time.monotonic()
        ended(Run(job, t, t, {"import_ms" if job.key.command == "import" else "first_ms": 2.0}))

    runs = run_jobs(plan.jobs, 4, launch)
    assert launched == [r.job for r in runs] and len(runs) == len(plan.jobs)
    result = plan.results(runs)[("first_add_warm", "rocm_array")]
    assert (result.status, result.median_ms, result.reps, result.at_once) == ("ok", 2.0, 1, 1)


def test_the_deadline_shares_the_time_left_among_the_timings_to_come() -> None:
    from benchmarks.deadline import AIM, FLOOR_MS, Deadline

    deadline = Deadline(100.0, start=0.0, timed=[True, False, True, True])
    assert deadline.budget_ms(now=0.0, cap_ms=300.0) == 300.0  # nothing spent yet: the cap
    deadline.spent(wall_s=10.0, timing_s=0.3)  # 9.7 s besides its timing
    deadline.spent(wall_s=20.0, timing_s=0.0)  # an untimed kind: all of it
    # 70 s left, less the margin (AIM); the two pairs to come are expected to take 14.85 s each
    # besides their timing.
    assert deadline.budget_ms(now=30.0, cap_ms=1e6) == pytest.approx((100 * AIM - 30 - 2 * 14.85) / 2 * 1e3)
    assert deadline.budget_ms(now=30.0, cap_ms=300.0) == 300.0
    assert deadline.budget_ms(now=95.0, cap_ms=300.0) == FLOOR_MS  # late: the floor, never less


def test_a_cold_process_gets_an_empty_compute_cache_of_its_own(tmp_path: Path) -> None:
    """NVRTC 13 keeps what it compiles in the compute cache it shares with the driver: a cold first
    call must not find there what an earlier process compiled (processes.COMPUTE_CACHE_VAR)."""
    from benchmarks.processes import COMPUTE_CACHE_VAR, Job, Key

    cold = Job(Key("first_call", "rocm_array", "exp", "cold"), str(tmp_path / "exp-0"))
    env = cold.env()
    assert env["ROCM_ARRAY_CACHE_DIR"] == cold.cache and Path(env[COMPUTE_CACHE_VAR]).is_dir()
    assert not any(Path(env[COMPUTE_CACHE_VAR]).iterdir())
    assert cold.again().env()[COMPUTE_CACHE_VAR] != env[COMPUTE_CACHE_VAR]
    warm = Job(Key("first_call", "rocm_array", "exp", "warm"), cold.cache, after=cold)
    assert COMPUTE_CACHE_VAR not in warm.env()  # (a warm call compiles nothing)
