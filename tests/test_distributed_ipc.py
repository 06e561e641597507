"""Chunks between processes of one machine through GPU memory both map (``rocm_array.distributed.ipc``).

The sender is this process; the receiver a fresh process (IPC memory cannot be opened by the
process that made it), started as a Dask worker is. On the simulator the memory is a shared file;
on a GPU, the platform's IPC handles. The Dask path (the handshake's advertisement, a rechunk
between two GPU workers) is in ``test_engine_dask_distributed.py``.
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Iterator

import numpy as np
import pytest

import rocm_array as xp
from rocm_array import devices
from rocm_array.distributed import ipc, serialize
from rocm_array.runtime.protocol import DriverError

from engines import to_numpy

if devices.default().kind != "gpu":
    pytest.skip("IPC is between GPUs (or the simulator's devices); the default device is the host",
                allow_module_level=True)


def _receive(header: dict[str, Any]) -> tuple[np.ndarray, str, dict[str, int]]:
    """In the receiving process: the chunk, where it landed, and that process's counts."""
    got = serialize.deserialize(header, [])
    return to_numpy(got), str(got.device), ipc.stats()


@pytest.fixture(autouse=True)
def every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ipc.MIN_VAR, "0")  # (the tests' chunks are small)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Any]:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        yield pool


def _context(**change: Any) -> dict[str, Any]:
    """Dask's serializer context for a recipient that advertised (another process, as the pool's)."""
    offer = ipc.advertisement()
    assert offer is not None
    return {"recipient": {ipc.KEY: {**offer, "pid": -1, **change}}}


def _sent(key: str) -> int:
    return ipc.stats().get(key, 0)


def test_a_chunk_crosses_through_ipc_and_its_export_is_lent_again(receiver: Any) -> None:
    h = np.arange(3000, dtype=np.float32).reshape(60, 50) - 1000.5
    x = xp.asarray(h)
    before = _sent("sent")
    header, frames = serialize.serialize(x, _context())
    assert frames == [] and set(header["ipc"]) == {"handle", "ack", "generation"}
    got, where, counts = receiver.apply(_receive, (header,))
    np.testing.assert_array_equal(got, h)
    assert where == "gpu:0" and counts["received"] >= 1 and counts["received bytes"] >= h.nbytes
    # Acknowledged: the next chunk of that size reuses the export, one generation on.
    again, _ = serialize.serialize(x.T, _context())  # (strided: made contiguous first)
    assert again["ipc"]["handle"] == header["ipc"]["handle"]
    assert again["ipc"]["generation"] == header["ipc"]["generation"] + 1
    got, _, again_counts = receiver.apply(_receive, (again,))
    np.testing.assert_array_equal(got, h.T)
    assert _sent("sent") == before + 2
    assert again_counts["mapped"] == counts["mapped"]  # the receiver kept the export mapped


def test_an_unacknowledged_export_is_not_lent_again(receiver: Any) -> None:
    x = xp.asarray(np.full(1000, 7, np.int64))
    first, _ = serialize.serialize(x, _context())
    second, _ = serialize.serialize(x, _context())  # the first not received yet
    assert second["ipc"]["handle"] != first["ipc"]["handle"]
    for header in (second, first):  # received in the other order
        got, _, _ = receiver.apply(_receive, (header,))
        np.testing.assert_array_equal(got, np.full(1000, 7, np.int64))


@pytest.mark.parametrize("change, why", [
    ({"host": "elsewhere/0"}, "another machine"),
    ({"platform": "another"}, "another platform (another)"),
    ({"card": "no-such-card"}, "the recipient's GPU is not visible here"),
])
def test_a_recipient_that_cannot_map_the_chunk_gets_bytes_and_the_reason_is_counted(change: dict[str, str],
                                                                                   why: str) -> None:
    h = np.linspace(0, 1, 100)
    before = _sent(f"bytes: {why}")
    header, frames = serialize.serialize(xp.asarray(h), _context(**change))
    assert "ipc" not in header and len(frames) == 1
    np.testing.assert_array_equal(to_numpy(serialize.deserialize(header, frames)), h)
    assert _sent(f"bytes: {why}") == before + 1


def test_no_advertisement_no_ipc_and_nothing_counted() -> None:
    """The client and the scheduler advertise nothing: bytes, as any Dask peer expects."""
    before = ipc.stats()
    header, frames = serialize.serialize(xp.asarray([1.0, 2.0]), {"recipient": {"address": "tcp://x:1"}})
    assert "ipc" not in header and len(frames) == 1
    assert ipc.stats() == before


def test_turned_off_here(monkeypatch: pytest.MonkeyPatch) -> None:
    context = _context()
    monkeypatch.setenv(ipc.VAR, "0")
    assert ipc.advertisement() is None
    header, frames = serialize.serialize(xp.asarray([1.0]), context)
    assert "ipc" not in header and len(frames) == 1
    assert _sent("bytes: turned off here (ROCM_ARRAY_IPC=0)") >= 1


def test_past_the_exports_limit_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ipc, "EXPORT_SHARE", 0.0)
    monkeypatch.setattr(ipc, "_exports", {})  # (made afresh under the limit set here)
    h = np.ones(4096, np.float32)
    header, frames = serialize.serialize(xp.asarray(h), _context())
    assert "ipc" not in header
    np.testing.assert_array_equal(to_numpy(serialize.deserialize(header, frames)), h)
    assert _sent("bytes: the chunk is larger than the exports' limit") >= 1


def test_a_chunk_under_the_floor_goes_as_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ipc.MIN_VAR, "1024")
    header, frames = serialize.serialize(xp.asarray(np.ones(255, np.float32)), _context())  # 1020 bytes
    assert "ipc" not in header and len(frames) == 1
    assert _sent("bytes: under 1024 bytes (ROCM_ARRAY_IPC_MIN_BYTES)") >= 1
    monkeypatch.setenv(ipc.MIN_VAR, "1M")
    with pytest.raises(ValueError, match="ROCM_ARRAY_IPC_MIN_BYTES='1M': expected a number of bytes"):
        serialize.serialize(xp.asarray(np.ones(4)), _context())


def test_a_handle_that_cannot_be_mapped_says_how_to_turn_the_route_off() -> None:
    header, _ = serialize.serialize(xp.asarray(np.ones(8)), _context())
    header["ipc"] = {**header["ipc"], "handle": b"\x01" * 64}  # no such export
    with pytest.raises(DriverError, match="ROCM_ARRAY_IPC=0 on the workers"):
        serialize.deserialize(header, [])
