"""``python -m benchmarks.distributed``: rocm_array past one GPU, beside CuPy and PyTorch.

Dask on ``LocalGPUCluster`` (one worker process per GPU), on 1 and on 2 GPUs, each library's chunks
generated on the workers (``rocm_array.random``, ``cupy.random``), both libraries' arrays held by
one cluster and their runs taken in turn (``alternating``); ``rocm_array-bytes`` is rocm_array with
the workers' GPU-to-GPU route off (chunks as bytes, as CuPy's cross here):

- ``generate``: drawing the array and persisting it (a first run: it includes the library's first
  calls in the workers, not the GPU's opening, done for both libraries before);
- ``(da.sin(x) ** 2).sum()`` and ``x.T @ x`` over an array of ``--gib`` GiB of float32, persisted;
- a rechunk from row chunks to column chunks on 2 workers, which moves half of every chunk to the
  other worker (the GB/s is of the bytes that cross);
- for each Dask case on several workers, the GiB that crossed between workers in a run and the rate
  of those transfers (Dask's own log: the sender's serialization, the comm and the receiver's);
- peer copies ``gpu:0 -> gpu:1`` of 256 MiB and 2 GiB in this process, rocm_array's ``to_device``
  beside ``torch.Tensor.to('cuda:1')``.

Each figure is the median wall-clock time of ``--repeats`` runs after one untimed run (a Dask
user's time: scheduling included; the libraries' runs alternate, the order reversed each round). It prints the table and the ratios: scaling (1 GPU over 2) and
CuPy's time over rocm_array's (above 1: rocm_array is faster). ``--device cpu --small`` runs the
same on two host workers in seconds, where CuPy and PyTorch are "n/a" (as on the simulator:
``ROCM_ARRAY_PLATFORM=sim ROCM_ARRAY_SIM_DEVICES=2``, whose missing BLAS makes ``x.T @ x`` n/a).
The target run: ``--gib 32`` on 2 H100s (16 GiB a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["main"]

MiB, GiB = 1 << 20, 1 << 30
#: rocm_array with its workers' IPC route off (ROCM_ARRAY_IPC=0): chunks cross as bytes, as CuPy's
#: do here; run on the largest cluster only (one worker moves nothing).
BYTES = "rocm_array-bytes"
#: The Dask cases, in the report's order.
CASES = ("generate", "sin2_sum", "gram", "rechunk")


# -- chunks made on the workers ---------------------------------------------------------------------

def _rocm_block(shape: tuple[int, int], seed: int, block_info: Any = None) -> Any:
    import rocm_array as xp

    i = block_info[None]["chunk-location"][0]
    return xp.random.default_rng(seed + i).random(shape, dtype=xp.float32)


def _cupy_block(shape: tuple[int, int], seed: int, block_info: Any = None) -> Any:
    import cupy

    i = block_info[None]["chunk-location"][0]
    return cupy.random.default_rng(seed + i).random(shape, dtype=cupy.float32)


def _meta(lib: str, device: str) -> Any:
    if lib == "cupy":
        import cupy
        return cupy.empty((0, 0), cupy.float32)
    import rocm_array as xp  # (rocm_array and BYTES)
    return xp.empty((0, 0), dtype=xp.float32, device="cpu" if device == "cpu" else None)


def generated(lib: str, device: str, rows: int, cols: int, chunk_rows: int, seed: int = 2025) -> Any:
    """A (rows, cols) float32 Dask array whose chunks each worker draws itself."""
    import dask.array as da

    chunks = (tuple(min(chunk_rows, rows - r) for r in range(0, rows, chunk_rows)), (cols,))
    block = _cupy_block if lib == "cupy" else _rocm_block
    return da.map_blocks(lambda block_info=None: block((block_info[None]["chunk-shape"][0], cols), seed,
                                                       block_info),
                         chunks=chunks, dtype=np.float32, meta=_meta(lib, device))


def cupy_serializers() -> str:
    """distributed's CuPy serializers need Numba (or RMM) to receive a chunk; where neither is
    installed, the same path registered here: a host copy (``cupy.asnumpy``) sent, and
    ``cupy.asarray`` on arrival. Returns which one is used."""
    try:
        import distributed.protocol.cupy  # noqa: F401
        return "distributed's"
    except ImportError:
        pass
    import cupy
    from distributed.protocol.serialize import dask_deserialize, dask_serialize

    def dumps(x: Any) -> tuple[dict[str, Any], list[Any]]:
        host = cupy.asnumpy(cupy.ascontiguousarray(x))
        return {"shape": list(x.shape), "dtype": host.dtype.str}, [host.reshape(-1).view(np.uint8).data]

    def loads(header: dict[str, Any], frames: list[Any]) -> Any:
        host = np.frombuffer(frames[0], np.uint8).view(np.dtype(header["dtype"])).reshape(header["shape"])
        return cupy.asarray(host)

    dask_serialize.register(cupy.ndarray)(dumps)
    dask_deserialize.register(cupy.ndarray)(loads)
    return "the benchmark's (distributed's needs numba, not installed): cupy.asnumpy / cupy.asarray"


# -- timing ------------------------------------------------------------------------------------------

def timed(run: Callable[[], Any], repeats: int) -> dict[str, Any]:
    """The median wall-clock seconds of ``repeats`` runs after an untimed one; n/a with the reason
    when the library cannot run it."""
    try:
        run()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
        return {"status": "n/a", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"status": "ok", "s": statistics.median(times), "times": times}


def _same(block: Any) -> Any:
    return block


def fresh(x: Any) -> Any:
    """``x`` under new keys (a task per chunk that returns it, on its worker): each timed run computes
    afresh, where the same keys could find an earlier run's results not yet released."""
    import uuid

    return x.map_blocks(_same, dtype=x.dtype, meta=x._meta, name=f"fresh-{uuid.uuid4().hex}")


def _transfers(dask_worker: Any) -> tuple[int, float, int]:
    """The bytes a worker has received from its peers, the seconds those transfers took (from the
    request to the chunk deserialized: the sender's serialization, the comm, the receiver's), and
    the bytes of those that came GPU to GPU (``rocm_array.distributed.ipc``)."""
    from rocm_array.distributed import ipc

    log = dask_worker.transfer_incoming_log
    return sum(e["total"] for e in log), sum(e["duration"] for e in log), ipc.stats().get("received bytes", 0)


def _open_gpus(libs: list[str]) -> None:
    """On a worker: each library's first use of the GPU (the context, its pools), so that no library's
    ``generate`` pays for another's, the first to run in the cluster."""
    import rocm_array as xp

    xp.zeros(1).device.runtime.synchronize()
    if "cupy" in libs:
        import cupy

        cupy.zeros(1).sum()
        cupy.cuda.Stream.null.synchronize()


def _ipc_on(on: bool) -> None:
    """On a worker: send chunks to its peers GPU to GPU (``on``) or as bytes (``ipc.VAR``)."""
    from rocm_array.distributed import ipc

    os.environ[ipc.VAR] = "1" if on else "0"


def alternating(client: Any, runs: dict[str, Callable[[], Any]], repeats: int) -> dict[str, dict[str, Any]]:
    """Each variant's result (``timed``'s, with the bytes that crossed workers in a run, the rate of
    those transfers and their share GPU to GPU): one untimed run each, then ``repeats`` rounds of
    one run each, in turn, the order reversed every round, so that the cluster's drift (the same
    run varied by 30% between clusters) falls on every variant alike."""
    names = list(runs)
    times: dict[str, list[float]] = {n: [] for n in names}
    moved: dict[str, list[float]] = {n: [0, 0.0, 0] for n in names}
    failed: dict[str, str] = {}
    for r in range(repeats + 1):
        for n in (names if r % 2 == 0 else names[::-1]):
            if n in failed:
                continue
            client.run(_ipc_on, n != BYTES)
            before = client.run(_transfers)
            try:
                t0 = time.perf_counter()
                runs[n]()
                elapsed = time.perf_counter() - t0
            except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
                failed[n] = f"{type(exc).__name__}: {str(exc)[:200]}"
                continue
            after = client.run(_transfers)
            for i in range(3):
                moved[n][i] += sum(after[w][i] - before[w][i] for w in after)
            if r:
                times[n].append(elapsed)
    client.run(_ipc_on, True)
    out: dict[str, dict[str, Any]] = {}
    for n in names:
        if n in failed:
            out[n] = {"status": "n/a", "reason": failed[n]}
            continue
        total, seconds, direct = moved[n]
        out[n] = {"status": "ok", "s": statistics.median(times[n]), "times": times[n],
                  "crossed_gib": total / GiB / (repeats + 1),
                  "transfer_gb_per_s": total / seconds / 1e9 if seconds else None,
                  "ipc_share": direct / total if total else None}
    return out


def _chunks_of(variant: str) -> str:
    """The library whose chunks a variant computes on (``BYTES``: rocm_array's)."""
    return "rocm_array" if variant == BYTES else variant


def dask_cases(libs: list[str], device: str, workers: int, args: argparse.Namespace,
               rows: int) -> dict[str, dict[str, Any]]:
    """Every library's Dask cases on ``workers`` workers of one fresh cluster, their runs in turn
    (``alternating``); ``BYTES`` runs on rocm_array's chunks with the workers' IPC route off."""
    import dask
    import dask.array as da
    import distributed

    from rocm_array.distributed import LocalGPUCluster

    variants = [lib for lib in libs if lib != BYTES or workers > 1]
    out: dict[str, dict[str, Any]] = {v: {} for v in variants}
    xs: dict[str, Any] = {}
    with LocalGPUCluster(workers, devices=device, dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        if device == "gpu":
            client.run(_open_gpus, variants)
        for lib in dict.fromkeys(map(_chunks_of, variants)):
            try:
                if lib == "cupy":
                    if device == "cpu":
                        raise RuntimeError("CuPy chunks need GPU workers")
                    out[lib]["cupy_serializers"] = cupy_serializers()
                    client.run(cupy_serializers)
                t0 = time.perf_counter()
                xs[lib] = generated(lib, device, rows, args.cols, args.chunk_rows).persist()
                distributed.wait(xs[lib])
                if lib in out:
                    out[lib]["generate"] = {"status": "ok", "s": time.perf_counter() - t0}
            except Exception as exc:  # noqa: BLE001 - a library that cannot run is reported
                xs.pop(lib, None)
                for v in variants:
                    if _chunks_of(v) == lib:
                        out[v].update({c: {"status": "n/a", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
                                       for c in CASES})
        columns = max(1, args.cols * args.chunk_rows // rows)

        def rechunk(x: Any) -> None:
            with dask.config.set({"array.rechunk.method": "tasks"}):
                y = fresh(x).rechunk((rows, columns)).persist()
                distributed.wait(y)
                del y

        cases: dict[str, Callable[[Any], Any]] = {
            "sin2_sum": lambda x: client.compute((da.sin(fresh(x)) ** 2).sum()).result(),
            "gram": lambda x: client.compute(fresh(x).T @ fresh(x)).result(),
        }
        if workers > 1:
            cases["rechunk"] = rechunk
        for case, run in cases.items():
            ready = [v for v in variants if _chunks_of(v) in xs]
            results = alternating(client, {v: (lambda v=v: run(xs[_chunks_of(v)]))
                                           for v in ready}, args.repeats)
            for v, r in results.items():
                if case == "rechunk" and r["status"] == "ok":
                    r["moved_gb_per_s"] = rows * args.cols * 4 * (workers - 1) / workers / r["s"] / 1e9
                out[v][case] = r
        xs.clear()
    return out


def peer_copies(sizes: list[int], repeats: int) -> dict[str, Any]:
    """gpu:0 -> gpu:1 in this process: rocm_array's to_device and torch's .to('cuda:1')."""
    import rocm_array as xp
    from rocm_array import devices

    gpus = devices.gpus()
    if len(gpus) < 2:
        return {"status": "n/a", "reason": f"{len(gpus)} GPU(s) in this process; a peer copy needs two"}
    a, b = gpus[0], gpus[1]
    out: dict[str, Any] = {"route": str(a.runtime.peer_route(b.runtime))}
    try:
        import torch
        have_torch = torch.cuda.device_count() >= 2
        why_torch = "" if have_torch else f"torch sees {torch.cuda.device_count()} CUDA device(s)"
    except ImportError as exc:
        have_torch, why_torch = False, f"torch is not installed ({exc})"
    for size in sizes:
        x = xp.zeros((size,), dtype=xp.uint8, device=a)

        def ours() -> None:
            x.to_device(b)
            b.runtime.synchronize()

        row = {"rocm_array": timed(ours, repeats)}
        if have_torch:
            t = torch.zeros(size, dtype=torch.uint8, device="cuda:0")

            def theirs() -> None:
                t.to("cuda:1")
                torch.cuda.synchronize(1)

            row["torch"] = timed(theirs, repeats)
            del t
        else:
            row["torch"] = {"status": "n/a", "reason": why_torch}
        for r in row.values():
            if r["status"] == "ok":
                r["gb_per_s"] = size / r["s"] / 1e9
        out[f"{size // MiB} MiB"] = row
        del x
    return out


# -- report ------------------------------------------------------------------------------------------

def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r["status"] != "ok":
        return "n/a"
    cell = f"{r['s'] * 1e3:.1f} ms" + (f" ({r['moved_gb_per_s']:.2f} GB/s)" if "moved_gb_per_s" in r else "")
    if r.get("crossed_gib"):
        rate, share = r.get("transfer_gb_per_s"), r.get("ipc_share")
        cell += (f"; {r['crossed_gib']:.2f} GiB crossed" + (f" at {rate:.2f} GB/s" if rate else "")
                 + (f", {share:.0%} GPU to GPU" if share is not None else ""))
    return cell


def _ratio(num: dict[str, Any] | None, den: dict[str, Any] | None) -> str:
    if not num or not den or num["status"] != "ok" or den["status"] != "ok":
        return "-"
    return f"{num['s'] / den['s']:.2f}"


def report(results: dict[str, Any], libs: list[str], workers: list[int]) -> str:
    lines = ["| case | " + " | ".join(f"{lib}, {n} worker{'s' if n > 1 else ''}" for lib in libs for n in workers)
             + " | " + " | ".join(f"{lib} scaling {min(workers)}->{max(workers)}" for lib in libs)
             + f" | CuPy / rocm_array ({max(workers)}) |" + (" IPC off / on |" if BYTES in libs else ""),
             "|---" * (1 + len(libs) * len(workers) + len(libs) + 1 + (BYTES in libs)) + "|"]
    why: dict[str, list[str]] = {}  # each reason once, with the cases it stopped
    for case in CASES:
        cells = [_cell(results.get(lib, {}).get(n, {}).get(case)) for lib in libs for n in workers]
        scaling = [_ratio(results.get(lib, {}).get(min(workers), {}).get(case),
                          results.get(lib, {}).get(max(workers), {}).get(case)) for lib in libs]
        vs = _ratio(results.get("cupy", {}).get(max(workers), {}).get(case),
                    results.get("rocm_array", {}).get(max(workers), {}).get(case))
        off = [_ratio(results.get(BYTES, {}).get(max(workers), {}).get(case),
                      results.get("rocm_array", {}).get(max(workers), {}).get(case))] if BYTES in libs else []
        lines.append(f"| {case} | " + " | ".join(cells + scaling + [vs] + off) + " |")
        for lib in libs:
            for n in workers:
                r = results.get(lib, {}).get(n, {}).get(case)
                if r and r["status"] != "ok":
                    why.setdefault(f"{lib}: {r['reason']}", []).append(f"{case} on {n}")
    reasons = [f"- {reason} ({', '.join(cases)})" for reason, cases in why.items()]
    peer = results.get("peer", {})
    lines.append("")
    if peer.get("status") == "n/a":
        lines.append(f"peer copies: n/a ({peer['reason']})")
    elif peer:
        lines.append(f"peer copies gpu:0 -> gpu:1 (rocm_array: {peer['route']}):")
        lines.append("| size | rocm_array | torch | torch / rocm_array time |")
        lines.append("|---|---|---|---|")
        for size, row in peer.items():
            if size == "route":
                continue
            cells = [f"{_cell(row[k])} ({row[k]['gb_per_s']:.1f} GB/s)" if row[k]["status"] == "ok" else "n/a"
                     for k in ("rocm_array", "torch")]
            lines.append(f"| {size} | {cells[0]} | {cells[1]} | {_ratio(row['torch'], row['rocm_array'])} |")
            for k in ("rocm_array", "torch"):
                if row[k]["status"] != "ok":
                    reasons.append(f"- peer {size}, {k}: {row[k]['reason']}")
    if "cupy_serializers" in results:
        reasons.append(f"- CuPy chunks crossed workers through {results['cupy_serializers']} serializers")
    return "\n".join(lines + ([""] + reasons if reasons else []))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.distributed", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["gpu", "cpu"], default="gpu", help="the workers' device kind (default: gpu)")
    p.add_argument("--small", action="store_true", help="tiny sizes, to check the script (64 MiB, 4 MiB chunks, 256 columns)")
    p.add_argument("--gib", type=float, default=32.0, help="GiB of float32 in x, over all workers (default: %(default)s)")
    p.add_argument("--cols", type=int, default=4096, help="columns of x (default: %(default)s)")
    p.add_argument("--chunk-mib", type=float, default=256.0, help="MiB per chunk (default: %(default)s)")
    p.add_argument("--workers", default="1,2", help="cluster sizes, comma-separated (default: %(default)s)")
    p.add_argument("--libs", default=f"rocm_array,cupy,{BYTES}",
                   help=f"chunk libraries; {BYTES}: rocm_array's with the IPC route off (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each case (default: %(default)s)")
    p.add_argument("--peer-mib", default="256,2048", help="peer copy sizes in MiB (default: %(default)s)")
    p.add_argument("--json", type=Path, help="also write every figure here")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.small:
        args.gib, args.cols, args.chunk_mib, args.peer_mib = 1 / 16, 256, 4.0, "4,16"
    args.chunk_rows = max(1, int(args.chunk_mib * MiB) // (4 * args.cols))
    rows = max(args.chunk_rows, int(args.gib * GiB) // (4 * args.cols))
    libs = [n.strip() for n in args.libs.split(",") if n.strip()]
    workers = sorted({int(n) for n in args.workers.split(",")})
    print(f"x: {rows} x {args.cols} float32 ({rows * args.cols * 4 / GiB:.2f} GiB) in chunks of {args.chunk_rows} rows "
          f"({args.chunk_rows * args.cols * 4 / MiB:.0f} MiB); workers on {args.device}: {workers}", file=sys.stderr)
    results: dict[str, Any] = {lib: {} for lib in libs}
    for n in workers:
        t0 = time.perf_counter()
        try:
            found = dask_cases(libs, args.device, n, args, rows)
        except Exception as exc:  # noqa: BLE001 - a layout that cannot run is reported
            found = {lib: {c: {"status": "n/a", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"} for c in CASES}
                     for lib in libs}
        for lib, cases in found.items():
            if "cupy_serializers" in cases:
                results["cupy_serializers"] = cases.pop("cupy_serializers")
            results[lib][n] = cases
        print(f"[{n} worker(s): {time.perf_counter() - t0:.0f} s]", file=sys.stderr)
    if args.device == "gpu":
        results["peer"] = peer_copies([int(float(m) * MiB) for m in args.peer_mib.split(",")], args.repeats)
    else:
        results["peer"] = {"status": "n/a", "reason": "--device cpu"}
    print(report(results, libs, workers))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
