"""``NeighbourRuns``: chunks made from nothing go to the workers in runs of neighbours, in the
numeric order of their chunk indices.

A tree reduction over chunks (``sum``, the partial products of ``x.T @ x``) combines neighbours:
chunks 0-3, then 4-7... It stays on one worker where each worker holds a run of neighbours. Dask
co-assigns root tasks in runs (with ``worker-saturation`` infinite, ``cluster.WORKER_SATURATION``),
but in the order of their priorities, and where nothing else orders them (chunks drawn and
persisted) ``dask.order`` breaks ties by the key as text: chunk 10 comes before chunk 2, so each
worker's run is a set of decimal prefixes. Measured on two host workers, 64 chunks: worker 0 got
0-3 and 10-37; over 128 chunks, 13 of ``x.T @ x``'s 4-way tree steps crossed workers where one
would in numeric order.

The plugin sees each graph before the scheduler hands its tasks out. For every group of root tasks
(no dependencies, keys ``(name, i, j, ...)`` of integers, at least two a worker thread, no
restrictions of their own), it cuts the group in numeric order into one run a running worker, in
proportion to the workers' threads, and restricts each task to its run's worker, loosely: a worker
that leaves lets its tasks go elsewhere, and work stealing may still move them.
"""

from __future__ import annotations

from typing import Any

from distributed import SchedulerPlugin

__all__ = ["NeighbourRuns"]


def _chunk_index(key: object) -> tuple[int, ...] | None:
    """``(i, j, ...)`` of a chunk's key ``(name, i, j, ...)``; None for any other key."""
    if not isinstance(key, tuple) or len(key) < 2 or not isinstance(key[0], str):
        return None
    index = key[1:]
    return index if all(type(i) is int for i in index) else None  # (bool is no chunk index)


def _worker_order(ws: Any) -> tuple[int, Any]:
    # LocalGPUCluster names workers by their GPU (0, 1, ...): as numbers, so worker 10 follows 9.
    return (0, ws.name) if isinstance(ws.name, int) else (1, str(ws.name))


class NeighbourRuns(SchedulerPlugin):
    """Restricts each new group of root tasks to runs of neighbouring chunks, one run a worker."""

    name = "rocm_array-neighbour-runs"

    def update_graph(self, scheduler: Any, *, tasks: list[Any], **kwargs: Any) -> None:
        workers = sorted(scheduler.running, key=_worker_order)
        threads = sum(ws.nthreads for ws in workers)
        if len(workers) < 2:
            return
        groups: dict[Any, list[tuple[tuple[int, ...], Any]]] = {}
        for key in tasks:
            ts = scheduler.tasks.get(key)
            index = _chunk_index(key)
            if (ts is None or index is None or ts.state != "released" or ts.run_spec is None
                    or ts.dependencies or ts.worker_restrictions or ts.host_restrictions
                    or ts.resource_restrictions):
                continue
            groups.setdefault(ts.group, []).append((index, ts))
        for members in groups.values():
            if len(members) < 2 * threads:
                continue
            members.sort(key=lambda m: m[0])
            start, done = 0, 0
            for ws in workers:
                done += ws.nthreads
                end = len(members) * done // threads
                for _, ts in members[start:end]:
                    ts.worker_restrictions = {ws.address}
                    ts.loose_restrictions = True
                start = end
