"""The benchmark harness's pure parts, without a GPU: the case table, the measurement loop on a
NumPy stand-in library, and the figures, table and JSON from synthetic numbers."""

from __future__ import annotations

import json
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
from benchmarks.measure import HostData, Settings, measure, sets_needed  # noqa: E402
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
                "axpy_loop_eager", "silu", "silu_of_scaled", "elu",
                *(f"matmul_{dt}" for dt in ("float32", "float16", "bfloat16", "float64"))}
    assert required <= set(names)


def test_work_counts() -> None:
    add = cases.BY_NAME["add"]
    assert add.work.bytes == 3 * 4 * 2**28 and add.work.ceiling == "copy"
    mm = cases.BY_NAME["matmul_bfloat16"]
    assert mm.work.flops == 2 * 8192**3 and mm.work.ceiling == "gemm:bfloat16"
    assert cases.BY_NAME["conv2d_float32"].work.flops == 2 * 32 * 128 * 56 * 56 * 64 * 9


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
