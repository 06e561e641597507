"""Where the host time of a tiny elementwise op goes: ``a + b`` on 16 float32 elements, timed
over a loop of 20,000 (as the benchmarks' ``tiny_add``), then under cProfile.

    python scripts/profile_tiny_op.py [--device gpu:0]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import rocm_array as xp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    a = xp.ones(16, dtype=xp.float32, device=args.device)
    b = xp.ones(16, dtype=xp.float32, device=args.device)
    for case, op in (("a + b", lambda: a + b), ("a + 1.0", lambda: a + 1.0), ("a += b", None)):
        for _ in range(2000):
            op() if op else a.__iadd__(b)
        start = time.perf_counter()
        for _ in range(20_000):
            op() if op else a.__iadd__(b)
        float(a[0])  # waits for the device
        print(f"{case}: {(time.perf_counter() - start) / 20_000 * 1e6:.2f} us per call")
    def loop() -> None:
        for _ in range(20_000):
            a + b

    profile = cProfile.Profile()
    profile.runcall(loop)
    pstats.Stats(profile).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
