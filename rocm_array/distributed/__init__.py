"""rocm_array on a Dask ``distributed`` cluster: one worker per GPU, chunks as bytes, spilling.

- ``LocalGPUCluster`` (``cluster``): one worker process per GPU of this machine, each with its own
  card as its default device (``placement`` says how, and why that way), spilling GPU chunks to
  host memory past ``device_memory_limit`` (``DeviceHostFile``, ``spill``).
- Across machines (a scheduler file, dask-jobqueue, dask-mpi): the same through the preloads of
  this module, ``dask scheduler --preload rocm_array.distributed`` and ``dask worker SCHEDULER
  --preload-nanny rocm_array.distributed`` (``dask_setup`` below).
- Chunks cross processes through Dask serializers for rocm_array arrays (``serialize``), which the
  ``numpy_dispatch`` plugin registers in every process that imports rocm_array and distributed;
  between workers of one machine, GPU to GPU through memory both map (``ipc``, ``transport``).

Importing this package imports neither Dask nor distributed (the plugin imports ``serialize`` at
every ``import rocm_array``); ``LocalGPUCluster`` and ``DeviceHostFile`` import them when used.
"""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING, Any

from . import placement

if TYPE_CHECKING:
    from .cluster import LocalGPUCluster
    from .spill import DeviceHostFile

__all__ = ["LocalGPUCluster", "DeviceHostFile", "dask_setup", "LIMIT_VAR"]

#: The nanny preload's ``device_memory_limit`` (a fraction, bytes, or "10 GiB"; 0: never spill).
LIMIT_VAR = "ROCM_ARRAY_DEVICE_MEMORY_LIMIT"

#: The nannies this process started (``dask worker --nworkers N`` runs N in one process): the k-th
#: gets the k-th GPU.
_nannies = itertools.count()


def __getattr__(name: str) -> Any:
    if name == "LocalGPUCluster":
        from .cluster import LocalGPUCluster
        return LocalGPUCluster
    if name == "DeviceHostFile":
        from .spill import DeviceHostFile
        return DeviceHostFile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dask_setup(server: Any) -> None:
    """The preload of ``dask scheduler --preload rocm_array.distributed`` and of
    ``dask worker ... --preload-nanny rocm_array.distributed``.

    - On the scheduler: chunks made on the workers go to them in runs of neighbours, as in
      ``LocalGPUCluster`` (``worker-saturation`` infinite, ``neighbours.NeighbourRuns``).
    - On a nanny, before it starts its worker process: a GPU and a spilling data mapping.

      - Its GPU: where the nanny's environment already narrows the GPUs to one (a batch system's
        ``--gpus-per-task=1``, a jobqueue script setting ``CUDA_VISIBLE_DEVICES``), that one; else
        the k-th nanny of this process (``--nworkers``) gets the k-th GPU, first among every GPU
        visible, as in ``LocalGPUCluster``.
      - Its data: ``DeviceHostFile(device_memory_limit)`` from ``ROCM_ARRAY_DEVICE_MEMORY_LIMIT``
        (default 0.8), unless the worker was given a ``data`` mapping of its own.
      - Its transfers: chunks from workers of the same machine GPU to GPU (``ChunkTransport``).
    """
    from distributed import Nanny, Scheduler

    if isinstance(server, Scheduler):
        from .cluster import WORKER_SATURATION
        from .neighbours import NeighbourRuns

        server.WORKER_SATURATION = WORKER_SATURATION
        server.add_plugin(NeighbourRuns(), idempotent=True)
        return
    if not isinstance(server, Nanny):
        raise TypeError("rocm_array.distributed is a scheduler or nanny preload: dask scheduler --preload "
                        "rocm_array.distributed, dask worker ... --preload-nanny rocm_array.distributed (a worker's "
                        "environment and data mapping are set by its nanny); without a nanny, start one worker per "
                        "GPU with its GPU first in CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES and "
                        "data=(rocm_array.distributed.DeviceHostFile, {...})")
    from .spill import DEFAULT_LIMIT, DeviceHostFile
    from .transport import ChunkTransport

    platform, ids = placement.visible_gpus()
    k = next(_nannies) % len(ids)
    server.env.update(placement.worker_env(k, platform, ids))
    server.worker_kwargs["plugins"] = (*server.worker_kwargs.get("plugins", ()), ChunkTransport())
    server.worker_kwargs.setdefault("data", (DeviceHostFile, {
        "device_memory_limit": os.environ.get(LIMIT_VAR, "").strip() or DEFAULT_LIMIT}))
