"""Fill the kernel cache for the first GPU: every program of the compile check, compiled in parallel.

    python scripts/warm_kernels.py [--jobs N] [PATH_PREFIX...]

A test or benchmark session then loads each program from ROCM_ARRAY_CACHE_DIR
instead of compiling it on first use, one at a time. PATH_PREFIX limits the
programs to kernel sources whose path starts with one of them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from rocm_array.compile_check import kernel_sources
from rocm_array.hookspecs import KernelSource


def _compile(ks: KernelSource) -> tuple[str, float, str]:
    from rocm_array.devices import gpus

    start = time.perf_counter()
    try:
        gpus()[0].runtime.compile(ks.path, ks.names, ks.options)
        error = ""
    except Exception as exc:  # reported, and the others go on
        error = f"{type(exc).__name__}: {exc}"
    return ks.path, time.perf_counter() - start, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("prefixes", nargs="*")
    args = parser.parse_args()
    sources = [ks for ks in kernel_sources() if not args.prefixes or ks.path.startswith(tuple(args.prefixes))]
    start = time.perf_counter()
    failed = 0
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for path, seconds, error in pool.map(_compile, sources):
            if error:
                failed += 1
                print(f"FAILED {path}: {error[:2000]}")
    print(f"warm_kernels: {len(sources)} programs in {time.perf_counter() - start:.1f} s, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
