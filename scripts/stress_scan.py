"""Stress the one-pass scan's look-back (#37): cumulative_sum and cumulative_prod through
``scan_tiles``, whose tiles wait on their row's earlier tiles, windows and groups (reduction.hip).
Every repetition must give the first one's values (the look-back combines in a fixed order: a change
is a race or a lost publication), and the first must be within the dtype's tolerance of NumPy's
(int64: exact). Exits 1 on any mismatch, after a summary line per case.

On a GPU (ROCM_ARRAY_DEVICE=gpu:0 picks it)::

    python scripts/stress_scan.py                      # 1000 repetitions, the default shapes
    python scripts/stress_scan.py --reps 100 --dtypes float64

Under NVIDIA's compute-sanitizer (few repetitions: it is slow)::

    compute-sanitizer --tool racecheck --racecheck-report all python scripts/stress_scan.py --reps 2 --small
    compute-sanitizer --tool synccheck python scripts/stress_scan.py --reps 2 --small

On the simulator, tiny shapes, each block order in turn::

    for o in forward reverse shuffle:1 interleave:1; do ROCM_ARRAY_PLATFORM=sim ROCM_ARRAY_DEVICE=gpu:0 \\
        ROCM_ARRAY_SIM_BLOCKS=$o python scripts/stress_scan.py --reps 2 --small; done
"""

from __future__ import annotations

import sys
import time

import numpy as np

import rocm_array as xp
from rocm_array import dtypes as ra_dtypes
from rocm_array.devices import Device
from rocm_array_plugins.reduction import gpu as reduction_gpu
from stress_fold import command_line, verdict  # (the stress scripts' options; scripts/ is on sys.path)

#: Relative tolerance of a sum against NumPy's float64 scan, by dtype: a sanity bound (the
#: repetitions' bits are the test). A product rounds at each factor: its bound is the row's length
#: times the dtype's epsilon.
RTOL = {"float32": 1e-5, "float64": 1e-12, "int64": 0.0}


def default_shapes(device: Device, dtype: str, small: bool) -> list[tuple[int, ...]]:
    """1-D rows one short of and one past a tile, a window of tiles (a wave of them) and a group (a
    wave of windows), and 2^26 elements (2^24 past float32); a few rows of several windows (the
    look-back a row) and enough rows to take the whole-row path. ``small``: the first three only."""
    tile = reduction_gpu._scan_tile(device, ra_dtypes.BY_NAME[dtype])
    wave = device.runtime.properties.wave_size
    edges = [tile, wave * tile] + ([] if small else [wave * wave * tile])
    shapes: list[tuple[int, ...]] = [(e + d,) for e in edges for d in (-1, 1)]
    if not small:
        shapes += [(1 << 26 if dtype == "float32" else 1 << 24,), (3, 5 * wave * tile + 7),
                   (device.runtime.properties.compute_units * reduction_gpu._SCAN_ROWS_PER_CU, 2 * tile + 1)]
    return shapes


def _data(shape: tuple[int, ...], dtype: str, product: bool) -> np.ndarray:
    rng = np.random.default_rng(sum(shape))
    if dtype == "int64":
        return rng.integers(-1000, 1001, shape, dtype=np.int64) if not product else np.ones(shape, np.int64)
    if product:  # near 1: a product of 2^26 stays finite
        return rng.uniform(1 - 1e-7, 1 + 1e-7, shape).astype(dtype)
    return rng.uniform(0, 1, shape).astype(dtype)


def run(reps: int, dtypes: list[str], device_name: str, small: bool) -> int:
    """Every case, ``reps`` times; the number of mismatching repetitions."""
    device = xp.asarray(0, device=device_name).device
    failures = 0
    for dtype in dtypes:
        for shape in default_shapes(device, dtype, small):
            for name in ("cumulative_sum", "cumulative_prod"):
                product = name == "cumulative_prod"
                a = _data(shape, dtype, product)
                x = xp.asarray(a, device=device_name)
                exact = a.astype(np.float64) if dtype != "int64" else a
                want = (np.cumprod if product else np.cumsum)(exact, axis=-1)
                scale = np.maximum(np.abs(want), 1e-30)
                rtol = shape[-1] * float(np.finfo(dtype).eps) if product and dtype != "int64" else RTOL[dtype]
                start = time.perf_counter()
                first = getattr(xp, name)(x, axis=-1)
                got = np.asarray(xp.asarray(first, device="cpu"))
                worst = float(np.max(np.abs(got - want) / scale)) if dtype != "int64" else float(np.any(got != want))
                bad = int(worst > rtol)
                for _ in range(reps - 1):  # (compared on the device: the inputs hold no NaN and no -0)
                    bad += not bool(xp.all(getattr(xp, name)(x, axis=-1) == first))
                failures += bad
                print(f"{'FAIL' if bad else 'ok  '} {name:15} {dtype:7} shape={shape!s:<18} reps={reps} "
                      f"mismatches={bad} worst_rel={worst:.2e} {time.perf_counter() - start:.2f}s", flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    args = command_line(argv, __doc__, list(RTOL), lambda parser: parser.add_argument(
        "--small", action="store_true", help="the tile and window edges only"))
    return verdict(run(args.reps, args.dtypes, args.device, args.small))


if __name__ == "__main__":
    sys.exit(main())
