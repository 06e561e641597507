"""``python -m benchmarks.chunk_transfer``: one chunk from one process's GPU to another's, by size.

The two routes of ``rocm_array.distributed.serialize`` between processes of one machine, each
process on its own GPU (``gpu:0`` here, the next card in the receiver, as ``LocalGPUCluster`` places
workers):

- ``ipc``: the sender lends an export, the receiver maps it and copies GPU to GPU (``ipc``);
- ``bytes``: the sender downloads the chunk into a frame, the frame goes through a pipe, the
  receiver uploads it. Dask's TCP is slower than a pipe (64 MiB took 55 ms between two workers),
  so this is the bytes route at its best.

Each figure is the median of ``--repeats`` round trips, from the sender's serialization until
the receiver says the chunk is on its GPU. The crossover chose ``ipc.MIN_BYTES``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from typing import Any

__all__ = ["main"]


def _receiver(conn: Any, env: dict[str, str]) -> None:
    os.environ.update(env)
    import numpy as np

    from rocm_array import devices
    from rocm_array.distributed import serialize

    conn.send(devices.default().runtime.properties.name)
    while True:
        header = conn.recv()
        if header is None:
            return
        frames = [conn.recv_bytes()] if "ipc" not in header else []
        got = serialize.deserialize(header, frames)
        got.device.runtime.synchronize()
        conn.send(int(np.asarray(got[:1].to_device("cpu"))[0]) if got.size else 0)


def _parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.chunk_transfer", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="4K,64K,256K,1M,4M,16M,64M,256M", help="chunk sizes (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=20, help="round trips per size and route (default: %(default)s)")
    args = p.parse_args(argv)

    import rocm_array as xp
    from rocm_array.distributed import ipc, placement, serialize

    platform, cards = placement.visible_gpus()
    if len(cards) < 2:
        print(f"chunk_transfer needs two GPUs ({len(cards)} on {platform})", file=sys.stderr)
        return 1
    os.environ[ipc.MIN_VAR] = "0"
    env = {**placement.worker_env(1, platform, cards), ipc.MIN_VAR: "0"}
    here, there = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(target=_receiver, args=(there, env))
    child.start()
    print(f"sender on {xp.asarray(0).device.runtime.properties.name}, receiver on {here.recv()}", file=sys.stderr)
    offer = ipc.advertisement()
    assert offer is not None
    context = {"recipient": {ipc.KEY: {**offer, "pid": child.pid, "card": cards[1]}}}
    print("| size | ipc | bytes (pipe) | bytes / ipc |")
    print("|---|---|---|---|")
    try:
        for text in args.sizes.split(","):
            n = _parse_size(text.strip())
            x = xp.full((n,), 7, dtype=xp.uint8)
            times: dict[str, list[float]] = {"ipc": [], "bytes": []}
            for _ in range(args.repeats + 1):  # (the first of each is not timed)
                for route, ctx in (("ipc", context), ("bytes", None)):
                    t0 = time.perf_counter()
                    header, frames = serialize.serialize(x, ctx)
                    assert ("ipc" in header) == (route == "ipc"), header.keys()
                    here.send(header)
                    for f in frames:
                        here.send_bytes(f)
                    assert here.recv() == 7
                    times[route].append(time.perf_counter() - t0)
            ipc_s, bytes_s = (statistics.median(times[r][1:]) for r in ("ipc", "bytes"))
            print(f"| {text} | {ipc_s * 1e3:.3f} ms | {bytes_s * 1e3:.3f} ms | {bytes_s / ipc_s:.2f} |", flush=True)
    finally:
        here.send(None)
        child.join(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
