"""``python -m benchmarks``: run the cases on every library present, print the table, write the files."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

# scikit-learn's array-API dispatch needs SciPy's, which is read when SciPy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

from . import cases as cases_mod
from . import processes, report
from .cases import IN_PROCESS, Case, NotAvailable
from .deadline import FLOOR_MS, TOTAL_S, Deadline
from .libs import LIBRARIES, Library
from .measure import REPO, HostData, Settings, measure

#: Cases that need no GPU: what a machine without one still measures.
HOST_ONLY_KINDS = ("import",)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument("--cases", help="comma-separated case names (default: all); see --list")
    p.add_argument("--libs", default=",".join(LIBRARIES), help="comma-separated libraries (default: %(default)s)")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results",
                   help="folder for results.json, table.md and ratios.png (default: %(default)s)")
    p.add_argument("--markdown", type=Path, help="also write the full report (BENCHMARKS.md) here")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse HEAD)")
    p.add_argument("--budget-ms", type=float, default=Settings.budget_ms,
                   help="the most device time spent timing one case on one library (default: %(default)s)")
    p.add_argument("--total-s", type=float, default=TOTAL_S,
                   help="the whole run's wall-clock budget: the in-process timings share what the fresh "
                        "processes leave of it, none below %g ms (0: each gets --budget-ms) "
                        "(default: %%(default)s)" % FLOOR_MS)
    p.add_argument("--at-once", type=processes.processes_arg, default=processes.AT_ONCE,
                   help="fresh processes alive at once, none on the GPU during another's timed call "
                        "(1: one at a time; default: a quarter of the cores, at most 4: %(default)s)")
    p.add_argument("--processes", type=processes.processes_arg, default=0, metavar="N",
                   help="at least N fresh processes a fresh-process measurement, where a case has fewer "
                        "(its own count: 3, or 1 for most cold first calls): to compare first calls "
                        "between versions, whose samples move by tens of percent between processes")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--report", type=Path, metavar="JSON",
                   help="measure nothing: print (and with --markdown write) the report of an earlier results.json")
    return p


def _shell(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=REPO).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _environment(loaded: dict[str, Any], commit: str | None) -> dict[str, Any]:
    env: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or _shell("git", "rev-parse", "--short=12", "HEAD") or "unknown",
        "command": "python -m benchmarks " + shlex.join(sys.argv[1:]),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    smi = _shell("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader")
    if smi:
        name, driver, memory = (s.strip() for s in smi.splitlines()[0].split(","))
        env.update(gpu=name, driver=driver, gpu_memory=memory)
    for name, lib in loaded.items():
        env[name] = lib.version() if lib.ns is not None else f"n/a ({lib.unavailable})"
    return env


def _properties(loaded: dict[str, Any]) -> dict[str, Any]:
    """GPU name and L2 size from the first library that tells them."""
    props: dict[str, Any] = {}
    for lib in loaded.values():
        if lib.ns is not None:
            try:
                for k, v in lib.properties().items():
                    if v and k not in props:
                        props[k] = v
            except Exception:  # noqa: BLE001 - properties are informative only
                pass
    return props


def _fresh(cases: list[Case], libs: dict[str, Library], settings: Settings, at_once: int,
           t_start: float) -> tuple[dict[tuple[str, str], dict[str, Any]], list[dict[str, Any]]]:
    """The fresh-process cases, all their processes run together (processes.py): each result as JSON,
    and each process's record (``Run.to_json``)."""
    if not cases:
        return {}, []
    runs: list[processes.Run] = []

    def progress(run: processes.Run) -> None:
        runs.append(run)
        count = len(runs)
        k, out = run.job.key, run.out
        figure = out.get(processes.FIGURE[k.command])
        what = f"{figure:.4g} ms" if figure is not None else out.get("na") or out.get("error", "")[:120]
        print(f"[process {count} {time.monotonic() - t_start:.0f}s] {' '.join([*k.argv(), k.state]).strip()}"
              f"{'' if run.job.timed else ' (fills the cache)'}: {what}", file=sys.stderr)

    print(f"fresh processes for {len(cases)} cases, up to {at_once} at once", file=sys.stderr)
    results = processes.measure([(c, n) for c in cases for n in libs], settings, at_once, progress)
    for case in cases:
        print(f"[{time.monotonic() - t_start:.0f}s] {case.name}: "
              + _summary({n: results[(case.name, n)].to_json() for n in libs}), file=sys.stderr)
    return {pair: r.to_json() for pair, r in results.items()}, [r.to_json(t_start) for r in runs]


def _in_process(cases: list[Case], libs: dict[str, Library], on_gpu: dict[str, Library], settings: Settings,
                data: HostData, total_s: float, t_start: float,
                results: dict[tuple[str, str], dict[str, Any]]) -> dict[str, float]:
    """The in-process cases one after another, each device timing given the device time that the
    run's deadline allows (deadline.py); their results go into ``results``; returns each case's wall
    time (s)."""
    deadline = Deadline(total_s, t_start, [c.kind == "device" for c in cases for n in libs if n in on_gpu]) \
        if total_s else None
    walls = {}
    for i, case in enumerate(cases, 1):
        t_case = time.monotonic()
        for name, lib in libs.items():
            case_settings = settings
            if deadline is not None and name in on_gpu and case.kind == "device":
                case_settings = replace(settings, budget_ms=deadline.budget_ms(time.monotonic(), settings.budget_ms))
            t0 = time.monotonic()
            result = measure(lib, case, data, case_settings)
            if deadline is not None and name in on_gpu:
                deadline.spent(time.monotonic() - t0, sum(result.times_ms) / 1e3 if case.kind == "device" else 0.0)
            results[(case.name, name)] = result.to_json()
        walls[case.name] = round(time.monotonic() - t_case, 2)
        print(f"[{i}/{len(cases)} {time.monotonic() - t_start:.0f}s] {case.name}: "
              + _summary({n: results[(case.name, n)] for n in libs}), file=sys.stderr)
    return walls


def _summary(results: dict[str, dict[str, Any]]) -> str:
    return ", ".join(f"{n} {r['median_ms']:.4g} ms" if "median_ms" in r else f"{n} {r['status']}"
                     for n, r in results.items())


def main(argv: list[str] | None = None) -> int:
    t_start = time.monotonic()
    args = _parser().parse_args(argv)
    if args.list:
        for c in cases_mod.CASES:
            print(f"{c.name:18} {c.kind:16} {c.note}")
        return 0
    if args.report:
        run = json.loads(args.report.read_text())
        print(report.markdown_table(run))
        if args.markdown:
            args.markdown.write_text(report.document(run))
        return 0
    try:
        selected = cases_mod.select(args.cases)
    except ValueError as e:
        _parser().error(str(e))
    names = [n.strip() for n in args.libs.split(",") if n.strip()]
    unknown = [n for n in names if n not in LIBRARIES]
    if unknown:
        _parser().error(f"unknown libraries {', '.join(unknown)}; known: {', '.join(LIBRARIES)}")
    libs = {n: LIBRARIES[n] for n in names}

    on_gpu = {}
    for name, lib in libs.items():
        try:
            lib.load()
            on_gpu[name] = lib
        except NotAvailable as e:
            print(f"{lib.title}: not available ({e})", file=sys.stderr)
    if not on_gpu:
        print("no GPU is present: only the host-side cases run", file=sys.stderr)
        selected = [c for c in selected if c.kind in HOST_ONLY_KINDS]
        if not selected:
            print("nothing to measure", file=sys.stderr)
            return 0

    props = _properties(libs)
    settings = Settings(l2_bytes=props.get("l2_bytes") or Settings.l2_bytes, budget_ms=args.budget_ms,
                        fresh_processes=args.processes)
    ceiling_cases = cases_mod.ceilings_for(selected) if on_gpu else []
    todo = [c for c in cases_mod.CASES if c in ceiling_cases or c in selected]
    # The fresh processes first: what they leave of --total-s is the in-process timings' to share.
    # The in-process cases' host data is made meanwhile, on a thread (HostData.prefetch).
    in_process = [c for c in todo if c.kind in IN_PROCESS]
    data = HostData()
    data.prefetch(in_process, settings)
    results, runs = _fresh([c for c in todo if c.kind in processes.KINDS], libs, settings, args.at_once, t_start)
    walls = _in_process(in_process, libs, on_gpu, settings, data, args.total_s, t_start, results)
    records = [{"name": c.name, "kind": c.kind, "note": c.note, "wall_s": walls.get(c.name),
                "work": {"bytes": c.work.bytes, "flops": c.work.flops, "dtype": c.work.dtype},
                "results": {n: results[(c.name, n)] for n in libs}} for c in todo]

    env = _environment(libs, args.commit)
    env.setdefault("gpu", props.get("gpu", "none"))
    env["l2_bytes"] = settings.l2_bytes
    # The measuring's wall time (the run's start to its last case), its budget, the processes at once.
    env.update(wall_s=round(time.monotonic() - t_start, 1), total_s=args.total_s, at_once=args.at_once)
    run = {"env": env, "ceilings": report.ceilings(records, {c.name for c in ceiling_cases}), "cases": records,
           "processes": runs}
    print(report.markdown_table(run))
    if on_gpu:
        args.out.mkdir(parents=True, exist_ok=True)
        report.write_json(run, args.out / "results.json")
        (args.out / "table.md").write_text(report.markdown_table(run) + "\n")
        print(report.plot(run, args.out / "ratios.png"), file=sys.stderr)
        print(f"wrote {args.out / 'results.json'} and {args.out / 'table.md'}", file=sys.stderr)
    if args.markdown:
        args.markdown.write_text(report.document(run))
        print(f"wrote {args.markdown}", file=sys.stderr)
    wall_s = time.monotonic() - t_start
    over = f", {wall_s - args.total_s:.0f} s over" if args.total_s and wall_s > args.total_s else ""
    print(f"total wall time {wall_s:.0f} s" + (f" (budget {args.total_s:.0f} s{over})" if args.total_s else ""),
          file=sys.stderr)
    return 0
