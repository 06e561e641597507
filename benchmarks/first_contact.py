"""A user's first contact, on one GPU, in one run: ``python -m benchmarks.first_contact``.

- each family's first call in fresh processes right after import (``child first_call``), kernel
  cache warm, rocm_array beside CuPy (the median of ``--processes``), and rocm_array's with an empty
  cache (one process each); all of them run together as ``benchmarks/processes.py`` schedules them
  (up to ``--at-once`` alive, no other process on the GPU during a timed call);
- ``conv2d_small`` from the start of the process (import included), rocm_array beside PyTorch;
- whether a process that imported rocm_array and made a first call of every vendor family holds
  another array framework (``torch``, ``cupy``, ``jax``, ``tensorflow``) in ``sys.modules``;
- the race of a background import: ``--race`` fresh processes, several at once, each importing
  rocm_array and at once asking array_api_compat for the namespace of an array (a half-imported
  ``torch`` made it raise AttributeError).

Prints one table and the checks; exits 1 if a check fails.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from . import processes
from .cases import Case
from .first_calls import FROM_START, VENDOR_FAMILIES
from .measure import REPO, Result, Settings

#: The families whose warm first call must be at most this (ms) and no slower than CuPy's.
BOUND_MS = 50.0
FAMILIES = ("add", "exp", "sum", "mean_axis", "argmax", "sort", "cumulative_sum", "unique_values",
            "boolean_mask", "astype", "matmul", "solve", "fft")

FRAMEWORKS_CHECK = """
import sys
import numpy as np
import rocm_array as xp
a = xp.asarray(np.random.default_rng(0).random((64, 64)) + 64 * np.eye(64), device="gpu:0")
x = xp.asarray(np.ones((1, 3, 16, 16), np.float32), device="gpu:0")
w = xp.asarray(np.ones((4, 3, 3, 3), np.float32), device="gpu:0")
r = [a @ a, xp.linalg.solve(a, a[:, 0]), xp.fft.rfft(a[0]), xp.nn.conv2d(x, w), xp.nn.max_pool2d(x, 2)]
[v.to_device("cpu") for v in r]
from rocm_array.runtime import vendor
vendor._join_preloads()
print(sorted({"torch", "cupy", "jax", "tensorflow"} & set(sys.modules)))
"""

RACE = """
import rocm_array as xp, array_api_compat
x = xp.ones(3)
assert array_api_compat.array_namespace(x) is xp
"""


def _median(result: Result) -> float | None:
    return result.median_ms if result.status == "ok" else None


def _fmt(ms: float | None) -> str:
    return f"{ms:.1f} ms" if ms is not None else "n/a"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.first_contact", description=__doc__.splitlines()[0])
    p.add_argument("--processes", type=int, default=5, help="fresh processes per warm figure (default 5)")
    p.add_argument("--race", type=int, default=50, help="processes of the race check (default 50)")
    p.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families")
    p.add_argument("--at-once", type=processes.processes_arg, default=processes.AT_ONCE,
                   help="fresh processes alive at once (default: a quarter of the cores, at most 4: %(default)s)")
    args = p.parse_args(argv)
    families = args.families.split(",")
    warm = {f: Case(f"first_{f}_warm", kind="first_call_warm", family=f, processes=args.processes) for f in families}
    cold = {f: Case(f"first_{f}_cold", kind="first_call_cold", family=f, processes=1) for f in families}
    starts = {f: Case(f"{f}_from_start", kind="from_start", family=f, processes=args.processes) for f in FROM_START}
    results = processes.measure([*((warm[f], lib) for f in families for lib in ("rocm_array", "cupy")),
                                 *((cold[f], "rocm_array") for f in families),
                                 *((starts[f], lib) for f in FROM_START for lib in ("rocm_array", "torch"))],
                                Settings(), args.at_once)
    ok = True
    print("| family | rocm_array warm | CuPy warm | ratio (CuPy / ours) | rocm_array cold |")
    print("|---|---|---|---|---|")
    for family in families:
        ours, cupy, ours_cold = (_median(results[(case.name, lib)]) for case, lib in
                                 ((warm[family], "rocm_array"), (warm[family], "cupy"), (cold[family], "rocm_array")))
        ratio = f"{cupy / ours:.2f}" if ours and cupy else ""
        print(f"| {family} | {_fmt(ours)} | {_fmt(cupy)} | {ratio} | {_fmt(ours_cold)} |", flush=True)
        if ours is None or (cupy is not None and ours > cupy) or (family not in VENDOR_FAMILIES and ours > BOUND_MS):
            ok = False
    for family, case in starts.items():
        ours, torch = _median(results[(case.name, "rocm_array")]), _median(results[(case.name, "torch")])
        print(f"\n{family} from the process's start (import included): rocm_array {_fmt(ours)}, "
              f"PyTorch {_fmt(torch)}" + (f", ratio {torch / ours:.2f}" if ours and torch else ""))
        ok = ok and ours is not None and ours <= 1200 and (torch is None or ours <= torch / 3)
    out = subprocess.run([sys.executable, "-c", FRAMEWORKS_CHECK], capture_output=True, text=True, cwd=REPO)
    frameworks = out.stdout.strip() if out.returncode == 0 else f"failed: {out.stderr.strip()[-300:]}"
    print(f"\nother frameworks in sys.modules after every vendor family's first call: {frameworks}")
    ok = ok and frameworks == "[]"
    with ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(lambda _: subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True),
                             range(args.race)))
    failed = [r.stderr.strip().splitlines()[-1] for r in runs if r.returncode != 0]
    print(f"race check: {len(failed)} of {len(runs)} processes failed"
          + (f" ({statistics.mode(failed)})" if failed else ""))
    ok = ok and not failed
    print("\nall checks passed" if ok else "\nsome checks failed")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
