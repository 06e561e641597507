"""Which GPU each Dask worker gets: one worker per GPU, as dask-cuda's ``LocalCUDACluster`` does.

Worker ``k`` sees every GPU of its machine, its own first: the platform's visible-devices variable
(``CUDA_VISIBLE_DEVICES`` on NVIDIA, ``HIP_VISIBLE_DEVICES`` on AMD and the simulator) lists the GPUs
rotated by ``k`` (``1,2,3,0`` for the second of four), and ``ROCM_ARRAY_DEVICE=gpu:0``. So:

- ``gpu:0`` in the worker, its default device, is its own card: chunks made or received there
  land on it, and so do CuPy's and PyTorch's in the same worker (they follow the same variable);
- the other cards stay visible as ``gpu:1``…, so ``to_device`` between them is still a peer copy;
- a pickled ``Device("gpu:0")`` means "the worker's own card" in every worker.

``ROCM_ARRAY_DEVICE=gpu:N`` alone (every worker seeing every card in one order) was the other way:
CuPy and PyTorch in the worker would still default to card 0, and a chunk pickled on ``gpu:N``
would restore on ``gpu:N`` wherever it went, not on the receiver's card. The cost of keeping the
other cards visible: each worker opens every card (a context each, a few hundred MiB on NVIDIA).

This module imports neither Dask nor distributed: ``LocalGPUCluster`` and the nanny preload use it.
"""

from __future__ import annotations

import os

from .. import runtime

__all__ = ["visible_gpus", "worker_env"]


def visible_gpus() -> tuple[str, list[str]]:
    """The GPU platform and the GPUs this process sees, as its visible-devices variable names them
    (ordinals, or what the variable already holds: ``2,3`` or UUIDs). Opens no device."""
    platform, count = runtime.count()
    if not count:
        _, problems = runtime.discover()
        raise RuntimeError("one worker per GPU needs a GPU, and none was found: "
                           + ("; ".join(problems) or "the drivers report no devices")
                           + " (for workers on the host, LocalGPUCluster(n, devices='cpu'))")
    given = os.environ.get(runtime.VISIBLE_VAR[platform])
    ids = [e.strip() for e in given.split(",") if e.strip()] if given else [str(i) for i in range(count)]
    return platform, ids[:count]


def worker_env(k: int, platform: str, ids: list[str]) -> dict[str, str]:
    """The environment of the worker for GPU ``ids[k]``: every GPU visible, its own first."""
    rotated = ids[k:] + ids[:k]
    return {runtime.VISIBLE_VAR[platform]: ",".join(rotated), "ROCM_ARRAY_DEVICE": "gpu:0"}
