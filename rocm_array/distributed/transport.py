"""``ChunkTransport``: the worker plugin that offers a worker's peers the IPC route (``ipc``).

Dask tells a serializer who receives (its ``context``: the recipient's handshake). A worker with
this plugin adds its advertisement (machine, process, platform, GPU) to the handshake of every
connection it opens, as the requester of a chunk always does, so a sender on the same machine can
hand it chunks through GPU memory both map. ``LocalGPUCluster`` and the nanny preload give every
worker this plugin.
"""

from __future__ import annotations

from typing import Any

from distributed import WorkerPlugin

from . import ipc

__all__ = ["ChunkTransport"]


class ChunkTransport(WorkerPlugin):
    """Adds ``ipc.advertisement()`` to the worker's connection handshakes (nothing where it has none)."""

    name = "rocm_array-chunk-transport"

    def setup(self, worker: Any) -> None:
        offer = ipc.advertisement()
        if offer is not None:
            # Worker.connection_args is the dict its connection pool passes to every connect().
            worker.connection_args.setdefault("handshake_overrides", {})[ipc.KEY] = offer
