"""What each first-contact family's first call compiles, and how long NVRTC takes: no GPU needed.

Runs each family of ``benchmarks/first_calls.py`` (the vendor-library ones aside) on the
simulator (``ROCM_ARRAY_PLATFORM=sim``), recording the kernels its first call asks the runtime
for, then compiles each of them alone with NVRTC for sm_90 (as a first call on an H100 does) and
prints, per family, the sum of the compiles and the longest: a call that launches several new
kernels compiles them at once (``launch.prepare``), so the longest is its wait where it prepares
them all together, the sum where it cannot.

    python scripts/first_compiles.py [--repeat 3]    # needs clang++ 15+ and cuda-bindings
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["ROCM_ARRAY_PLATFORM"] = "sim"
os.environ["ROCM_ARRAY_DEVICE"] = "gpu:0"
os.environ.setdefault("ROCM_ARRAY_CACHE_DIR", tempfile.mkdtemp(prefix="first-compiles-"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is a folder of the repository

import numpy as np  # noqa: E402

import rocm_array as xp  # noqa: E402
from benchmarks.first_calls import FAMILIES, VENDOR_FAMILIES  # noqa: E402
from rocm_array.runtime import gpu  # noqa: E402
from rocm_array.runtime.compiler import compile_program, kernel_source  # noqa: E402
from rocm_array.runtime.nvidia import NvrtcRtc  # noqa: E402


def kernels_asked(family: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(source, name, options) of each kernel the family's first call asks for, in order."""
    inputs, ops = FAMILIES[family]
    op = ops.get("rocm_array", ops.get("*"))
    assert op is not None
    arrays = [xp.asarray(a, device="gpu:0") for a in inputs(np.random.default_rng(0))]
    asked: dict[tuple[str, str, tuple[str, ...]], None] = {}
    original = gpu.GpuRuntime.kernel

    def record(self: gpu.GpuRuntime, path: str, name: str, group: object = (), options: object = ()) -> object:
        asked[(path, name, tuple(options))] = None  # type: ignore[arg-type]
        return original(self, path, name, group, options)  # type: ignore[arg-type]

    gpu.GpuRuntime.kernel = record  # type: ignore[method-assign]
    try:
        op(type("L", (), {"ns": xp}), *arrays)
    finally:
        gpu.GpuRuntime.kernel = original  # type: ignore[method-assign]
    return list(asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="compiles of each kernel (the fastest counts)")
    args = parser.parse_args()
    rtc = NvrtcRtc()
    print(f"NVRTC {rtc.version()}, sm_90; each kernel compiled alone, fastest of {args.repeat}")
    print(f"{'family':16s} {'kernels':>7s} {'sum':>9s} {'longest':>9s}  kernels")
    for family in FAMILIES:
        if family in VENDOR_FAMILIES:  # (the simulator has no vendor libraries)
            continue
        times = []
        for path, name, options in kernels_asked(family):
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                compile_program(rtc, kernel_source(path), path, [name], [*rtc.target_options("sm_90", 32), *options],
                                "sm_90")
                best = min(best, time.perf_counter() - start)
            times.append((best, name))
        total, longest = sum(t for t, _ in times), max(t for t, _ in times)
        names = ", ".join(f"{n} {t * 1000:.0f}" for t, n in times)
        print(f"{family:16s} {len(times):7d} {total * 1000:7.0f} ms {longest * 1000:7.0f} ms  {names}")


if __name__ == "__main__":
    main()
