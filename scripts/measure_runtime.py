"""Measure the GPU runtime on the device present: kernel compile times (cold: compiled,
warm: from the on-disk cache in a new process, hot: from memory) and copy bandwidths
(host -> device and back, pageable direct vs through rocm_array's pinned staging vs
from pinned memory; device -> device memcpy and the cast/transpose kernels).

Usage: python scripts/measure_runtime.py [--json FILE]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from rocm_array import devices, dtypes, memory

_COMPILE = """
import json, time
from rocm_array import devices, dtypes
from rocm_array.memory import copies
from rocm_array.runtime import targets
rt = devices.parse("gpu:0").runtime
compiled = []
real = rt.compiler.rtc.compile
rt.compiler.rtc.compile = lambda *a: compiled.append(1) or real(*a)
out = {}
kind = targets.kind(rt.properties.arch, rt.properties.wave_size)
mine = [ks for ks in copies.kernel_sources() if not ks.kinds or kind in ks.kinds]  # (the device's options)
for ks in mine[-2:]:  # copies from float64 and from complex128: 45 kernels each
    src = ks.names[0].split("<")[1].split(",")[0]
    start = time.perf_counter()
    rt.load(rt.compile(ks.path, ks.names, ks.options))
    out[f"copies from {src} ({len(ks.names)} kernels)"] = time.perf_counter() - start
start = time.perf_counter()
rt.compile(ks.path, ks.names, ks.options)
out["again in the same process"] = time.perf_counter() - start
out["programs compiled"] = len(compiled)
out["cache"] = str(rt.compiler.cache)
print(json.dumps(out))
"""


def compile_times() -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ROCM_ARRAY_CACHE_DIR": cache}
        runs = [json.loads(subprocess.run([sys.executable, "-c", _COMPILE], env=env, check=True,
                                          capture_output=True, text=True).stdout.splitlines()[-1])
                for _ in range(2)]
    return {"cold": runs[0], "warm": runs[1]}


def _rate(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def _best(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def host_bandwidth(gpu: devices.Device, sizes: list[int]) -> list[dict[str, float]]:
    rt = gpu.runtime
    d = rt.driver
    rows = []
    for n in sizes:
        host = np.ones(n, np.uint8)
        back = np.empty_like(host)
        dev = memory.from_host(host, dtypes.uint8, gpu)
        ptr = dev._buf.ptr
        pinned = d.host_alloc(n)
        pview = np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(pinned))
        pview[:] = 1

        def sync_after(f):  # type: ignore[no-untyped-def]
            return lambda: (f(), d.synchronize())

        row = {
            "MiB": n / 2**20,
            "h2d rocm_array": _rate(n, _best(sync_after(lambda: memory.from_host(host, dtypes.uint8, gpu)))),
            "d2h rocm_array": _rate(n, _best(lambda: memory.to_host(dev))),
            "h2d pageable": _rate(n, _best(sync_after(lambda: d.memcpy(ptr, host.ctypes.data, n, "htod")))),
            "d2h pageable": _rate(n, _best(sync_after(lambda: d.memcpy(back.ctypes.data, ptr, n, "dtoh")))),
            "h2d staged": _rate(n, _best(sync_after(lambda: rt._staging.upload(ptr, host)))),
            "d2h staged": _rate(n, _best(lambda: rt._staging.download(back, ptr))),
            "h2d pinned": _rate(n, _best(sync_after(lambda: d.memcpy(ptr, pinned, n, "htod")))),
            "d2h pinned": _rate(n, _best(sync_after(lambda: d.memcpy(pinned, ptr, n, "dtoh")))),
        }
        d.host_free(pinned)
        rows.append(row)
    return rows


def device_bandwidth(dev: devices.Device) -> dict[str, float]:
    rt = dev.runtime
    n = 1 << 28  # 256 Mi elements
    a = memory.full((n,), 1.0, dtypes.float32, dev)
    out = {}

    def timed(label: str, nbytes: int, f) -> None:  # type: ignore[no-untyped-def]
        f()
        start, end = rt.event(), rt.event()
        start.record()
        for _ in range(5):
            f()
        end.record()
        out[label] = nbytes * 5 / (start.elapsed_ms(end) / 1e3) / 1e9

    b = memory.empty((n,), dtypes.float32, dev)
    timed("d2d memcpy float32 (GB/s read+write)", 8 * n, lambda: memory.copy_into(b, a))
    h = memory.empty((n,), dtypes.float16, dev)
    timed("cast float32->float16 contiguous", 6 * n, lambda: memory.copy_into(h, a))
    m = 1 << 14
    sq = a._view((m, m), (m, 1), 0)
    t = memory.empty((m, m), dtypes.float32, dev)
    timed("transpose float32 16384^2", 8 * m * m, lambda: memory.copy_into(t, sq._view((m, m), (1, m), 0)))
    rows = ((m // 2, m), (2 * m, 1), 0)  # every other row: a 2-D strided copy
    timed("strided float32 every other row", 4 * n, lambda: memory.copy_into(t._view(*rows), sq._view(*rows)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    gpus = devices.gpus()
    if not gpus:
        print("no GPU:", "; ".join(devices.gpu_problems()))
        return 1
    rt = gpus[0].runtime
    p = rt.properties
    print(f"{p.name} ({p.platform} {p.arch}, wave {p.wave_size}, {p.compute_units} CUs, "
          f"{p.total_memory / 2**30:.0f} GiB), compiler {rt.compiler.target}")
    result = {"device": p.name, "compile_seconds": compile_times(),
              "host_GBps": host_bandwidth(gpus[0], [1 << 20, 4 << 20, 16 << 20, 32 << 20, 64 << 20, 1 << 30]),
              "device_GBps": device_bandwidth(gpus[0])}
    c = result["compile_seconds"]
    for what in c["cold"]:
        cold, warm = c["cold"][what], c["warm"][what]
        if isinstance(cold, float):
            print(f"compile {what:36}: cold {cold:.3f} s, warm (disk, new process) {warm:.4f} s")
        else:
            print(f"{what:44}: cold run {cold}, warm run {warm}")
    for row in result["host_GBps"]:
        print(f"{row['MiB']:7.0f} MiB  " + "  ".join(f"{k} {v:6.1f}" for k, v in row.items() if k != "MiB"))
    for k, v in result["device_GBps"].items():
        print(f"{k:40}: {v:8.1f} GB/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
