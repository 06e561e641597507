"""``LocalGPUCluster``: a ``distributed.LocalCluster`` with one worker process per GPU.

As dask-cuda's ``LocalCUDACluster``: worker ``k`` sees its GPU first (``placement``), its data
spills GPU chunks to host memory past ``device_memory_limit`` (``spill.DeviceHostFile``), and
chunks cross workers through the serializers of ``serialize``, GPU to GPU where the workers share
the machine (``transport.ChunkTransport``, ``ipc``). Chunks made on the workers go to
them in runs of neighbours (``WORKER_SATURATION``, ``neighbours.NeighbourRuns``). ``devices="cpu"`` starts the same
layout with workers on the host, so code and tests written for the GPU layout run without one.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import dask
from distributed import LocalCluster
from distributed.system import MEMORY_LIMIT

from . import placement
from .neighbours import NeighbourRuns
from .spill import DEFAULT_LIMIT, DeviceHostFile
from .transport import ChunkTransport

__all__ = ["LocalGPUCluster", "WORKER_SATURATION"]

#: The scheduler's ``distributed.scheduler.worker-saturation`` for this cluster: infinite, so root
#: tasks (chunks made from nothing, as ``map_blocks`` drawing random numbers) are co-assigned, runs
#: of neighbours to one worker, and the tree reductions over neighbours (``sum``, the partial
#: products of ``x.T @ x``) combine on the worker that holds them. With Dask's default (1.1), root
#: tasks are queued and handed out as threads free up: with one thread a worker, neighbours
#: alternate between workers. Measured on two host workers (64 chunks, ``x.T @ x`` of 256 columns):
#: 10.0 MiB of partial products crossed workers with 1.1, 2.5 MiB with infinity. The cost Dask's
#: queuing avoids, a worker drawing all its root tasks before reducing any, is bounded here by
#: spilling (``device_memory_limit``). Root tasks with chunk keys are placed in numeric runs by
#: ``NeighbourRuns``; this setting keeps the rest (other root tasks) in runs too.
WORKER_SATURATION = math.inf


class LocalGPUCluster(LocalCluster):
    """One worker process per GPU of this machine, each with its own card as its default device.

    - ``n_workers``: the first ``n_workers`` GPUs (default: every GPU visible; with
      ``devices="cpu"``, required).
    - ``devices``: ``"gpu"`` (the default) or ``"cpu"``: the same layout on the host.
    - ``device_memory_limit``: what each worker keeps on its GPU before spilling chunks to host
      memory: a fraction of the GPU's memory, bytes, or a string (``"10 GiB"``); 0 or None: never.
    - ``env``: more environment variables for every worker (the GPU placement's win).
    - ``worker_saturation``: the scheduler's setting of that name (``WORKER_SATURATION``: why inf).
    - anything else goes to ``LocalCluster`` (``threads_per_worker`` is 1 unless given: one
      thread feeds a GPU; ``processes`` must stay True, the environment is set per process).
    """

    def __init__(self, n_workers: int | None = None, *, devices: str = "gpu",
                 device_memory_limit: float | int | str | None = DEFAULT_LIMIT,
                 env: dict[str, str] | None = None, worker_saturation: float = WORKER_SATURATION,
                 **kwargs: Any) -> None:
        if devices not in ("gpu", "cpu"):
            raise ValueError(f"LocalGPUCluster(): devices={devices!r}: expected 'gpu' or 'cpu'")
        if not kwargs.setdefault("processes", True):
            raise ValueError("LocalGPUCluster(): processes=False would put every worker in this process, "
                             "where they cannot each have their own GPU; leave processes=True")
        if devices == "gpu":
            self._platform, self._gpus = placement.visible_gpus()
            n = len(self._gpus) if n_workers is None else n_workers
            if not 1 <= n <= len(self._gpus):
                raise ValueError(f"LocalGPUCluster(): n_workers={n_workers}: one worker per GPU, and "
                                 f"{len(self._gpus)} GPU(s) are visible ({self._platform}: {','.join(self._gpus)})")
            kwargs.setdefault("data", (DeviceHostFile, {"device_memory_limit": device_memory_limit}))
            kwargs["plugins"] = (*kwargs.get("plugins", ()), ChunkTransport())
        else:
            if n_workers is None or n_workers < 1:
                raise ValueError("LocalGPUCluster(devices='cpu') needs n_workers (the host has no GPUs to count)")
            self._platform, self._gpus, n = "", [], n_workers
        self.device_kind = devices
        self._extra_env = dict(env or {})
        kwargs.setdefault("threads_per_worker", 1)
        kwargs.setdefault("memory_limit", MEMORY_LIMIT // n)  # the host's memory shared out, as LocalCluster does
        self._worker_saturation = worker_saturation
        scheduler_kwargs = dict(kwargs.pop("scheduler_kwargs", None) or {})
        scheduler_kwargs["plugins"] = [*scheduler_kwargs.get("plugins", ()), NeighbourRuns()]
        super().__init__(n_workers=0, scheduler_kwargs=scheduler_kwargs, **kwargs)
        self.scale(n)
        if not self.asynchronous:  # (an asynchronous one starts its workers when awaited)
            self.sync(self._correct_state)

    async def _start(self) -> None:
        # The scheduler reads the setting as it is made, here (at once, or when an asynchronous
        # cluster is awaited).
        with dask.config.set({"distributed.scheduler.worker-saturation": self._worker_saturation}):
            await super()._start()

    def new_worker_spec(self) -> dict[int, dict[str, Any]]:
        """The next worker's spec, named by its place in the layout (its GPU's, with devices='gpu')."""
        free = sorted(set(range(max(len(self._gpus), len(self.worker_spec) + 1))) - set(self.worker_spec))
        k = free[0]
        if self._gpus and k >= len(self._gpus):
            raise ValueError(f"LocalGPUCluster: every one of the {len(self._gpus)} GPUs has its worker")
        spec = copy.deepcopy(self.new_spec)
        env = (placement.worker_env(k, self._platform, self._gpus) if self._gpus
               else {"ROCM_ARRAY_DEVICE": "cpu"})
        spec["options"]["env"] = {**spec["options"].get("env", {}), **env, **self._extra_env}
        return {k: spec}
