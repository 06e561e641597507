"""Stress the full reductions whose last block folds its peers' partials (#37): reduce_all (fusion
off) and reduce_all_of (a fused expression), for sum, any, var, max and argmax, at many sizes, many
times each. Every repetition must give the first one's bits (a race shows as a change) and the first
must be within the dtype's tolerance of NumPy's float64 result; the counter of finished blocks must
be zero after each. Exits 1 on any mismatch, after a summary line per case.

On a GPU (ROCM_ARRAY_DEVICE=gpu:0 picks it)::

    python scripts/stress_fold.py                      # 1000 repetitions, the default sizes
    python scripts/stress_fold.py --reps 100 --sizes 2097155,67108864

Under NVIDIA's compute-sanitizer (few repetitions: it is slow; racecheck sees shared memory only,
synccheck the barriers; memcheck shows a partial written out of its buffer)::

    compute-sanitizer --tool racecheck --racecheck-report all python scripts/stress_fold.py --reps 2
    compute-sanitizer --tool synccheck python scripts/stress_fold.py --reps 2
    compute-sanitizer --tool memcheck python scripts/stress_fold.py --reps 2

On the simulator, tiny sizes, each block order in turn::

    for o in forward reverse shuffle:1 interleave:1; do ROCM_ARRAY_PLATFORM=sim ROCM_ARRAY_DEVICE=gpu:0 \\
        ROCM_ARRAY_SIM_BLOCKS=$o python scripts/stress_fold.py --reps 2 --sizes 16385,24577 --dtypes float64; done
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

import rocm_array as xp
from rocm_array import fusion
from rocm_array_plugins.elementwise import deferred
from rocm_array_plugins.reduction import gpu as reduction_gpu

#: (name, the reduction of a rocm_array x, the same of a NumPy float64 x): each a full reduction.
CASES: list[tuple[str, Callable[[xp.Array], xp.Array], Callable[[np.ndarray], Any]]] = [
    ("sum", lambda x: xp.sum(x * 2 + 1), lambda a: np.sum(a * 2 + 1)),
    ("any", lambda x: xp.any(x > 3.9), lambda a: np.any(a > 3.9)),
    ("var", lambda x: xp.var(xp.sin(x) + x, correction=1), lambda a: np.var(np.sin(a) + a, ddof=1)),
    ("max", lambda x: xp.max(xp.abs(x - 0.25)), lambda a: np.max(np.abs(a - 0.25))),
    ("argmax", lambda x: xp.argmax(x * x + 1), lambda a: np.argmax(a * a + 1)),
]
#: Relative tolerance against float64 NumPy, by dtype: a sanity bound (a float32 tree sum of 2^26 stays
#: within 1e-6; the expressions round in the dtype); a race shows in the repetitions' bits.
RTOL = {"float32": 1e-4, "float64": 1e-12}


def default_sizes(device: object) -> list[int]:
    """The issue's sizes (2^21 + 3 and 2^26) and sizes about the block counts the device's reductions
    choose: one short of and one past 2, 3 and 17 smallest chunks, and of a full grid's chunk."""
    chunk = reduction_gpu._MIN_CHUNK
    blocks = device.runtime.properties.compute_units * reduction_gpu._BLOCKS_PER_CU  # type: ignore[attr-defined]
    edges = [k * chunk for k in (2, 3, 17)] + [blocks * chunk, 3 * blocks * chunk]
    return sorted({2**21 + 3, 2**26, *(e + d for e in edges for d in (-1, 1))})


def run(sizes: list[int], reps: int, dtypes: list[str], device_name: str) -> int:
    """Every case at every size, ``reps`` times, fused and not; the number of mismatches."""
    device = xp.asarray(0, device=device_name).device
    deferred.COMPILE_IN_BACKGROUND = False  # a fused case's first call runs its fused kernel
    fusion.set_enabled(True)
    failures = 0
    for dtype in dtypes:
        for n in sizes:
            a = np.random.default_rng(n).uniform(-4, 4, n).astype(dtype)
            x, exact = xp.asarray(a, device=device_name), a.astype(np.float64)
            for fused in (False, True):
                for name, f, reference in CASES:
                    kind = "reduce_all_of" if fused else "reduce_all"
                    want = reference(exact if name != "argmax" else a)  # (argmax: the dtype's own ties)
                    first: bytes | None = None
                    bad, worst, start = 0, 0.0, time.perf_counter()
                    for _ in range(reps):
                        with contextlib.nullcontext() if fused else fusion.eager():
                            got = np.asarray(xp.asarray(f(x), device="cpu"))
                        done = reduction_gpu._DONE.get(device.runtime)
                        counter = int(np.asarray(xp.asarray(done, device="cpu"))[0]) if done is not None else 0
                        error = abs(float(got) - float(want)) / max(abs(float(want)), 1e-30)
                        worst = max(worst, error)
                        exact_case = name in ("any", "argmax")
                        wrong = (got != want) if exact_case else error > RTOL[dtype]
                        if first is None:
                            first = got.tobytes()
                        bad += bool(wrong or got.tobytes() != first or counter)
                    failures += bad
                    print(f"{'FAIL' if bad else 'ok  '} {kind:13} {name:6} {dtype:7} n={n:<10} reps={reps} "
                          f"mismatches={bad} worst_rel={worst:.2e} {time.perf_counter() - start:.2f}s", flush=True)
    return failures


def command_line(argv: list[str] | None, doc: str, dtypes: Sequence[str],
                 extra: Callable[[argparse.ArgumentParser], Any] = lambda parser: None) -> argparse.Namespace:
    """The stress scripts' options: --reps (at least 1), --dtypes (each among ``dtypes``, the first
    ones the default: a list), --device, and those ``extra`` adds."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=1000, help="repetitions of each case (default 1000)")
    parser.add_argument("--dtypes", default=",".join(dtypes), help=f"comma-separated (default {','.join(dtypes)})")
    parser.add_argument("--device", default="gpu:0")
    extra(parser)
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps {args.reps}: give at least 1")
    args.dtypes = args.dtypes.split(",")
    unknown = [d for d in args.dtypes if d not in dtypes]
    if unknown:
        parser.error(f"--dtypes: {', '.join(unknown)} not among {', '.join(dtypes)}")
    return args


def verdict(failures: int) -> int:
    """The last line, and the exit status: 1 when any repetition mismatched."""
    print(f"{'FAILED' if failures else 'passed'}: {failures} mismatching repetitions", flush=True)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    args = command_line(argv, __doc__, list(RTOL), lambda parser: parser.add_argument(
        "--sizes", help="comma-separated element counts (default: default_sizes)"))
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else default_sizes(xp.asarray(0, device=args.device).device))
    return verdict(run(sizes, args.reps, args.dtypes, args.device))


if __name__ == "__main__":
    sys.exit(main())
