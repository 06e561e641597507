"""How an in-process case is measured on one library; each returns a ``Result`` (raw figures,
JSON-ready). The fresh-process cases are ``processes.py``'s.

Device cases: inputs from fresh random host data, uploaded once per rotating
set; enough sets that together they exceed the L2 cache several times, so a
repeat never finds its inputs in the cache. The first call (compilation, handle
creation, lazy loading) is timed on the host and reported apart; after more
warm-up calls, each repeat is bracketed by the library's own device events and
the median is the figure.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .cases import MISSING, Case, Input, describe
from .libs import Library

__all__ = ["Result", "Settings", "HostData", "measure", "sets_needed", "sets_of", "REPO"]

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    status: str  # "ok", "n/a" or "error"
    reason: str = ""
    median_ms: float | None = None
    times_ms: list[float] = field(default_factory=list)
    first_call_ms: float | None = None
    reps: int = 0
    sets: int = 0
    budget_ms: float | None = None  # device cases: the device time its timing was given (deadline.py)
    at_once: int = 0  # fresh-process cases: the most processes alive during a kept sample's call
    discarded: int = 0  # fresh-process cases: samples taken again (another process had the GPU)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "", [], 0)}


@dataclass(frozen=True)
class Settings:
    l2_bytes: int = 64 << 20
    budget_ms: float = 300.0  # the most device time spent timing one case on one library (deadline.py)
    min_reps: int = 10
    max_reps: int = 200
    max_sets: int = 32
    warmup: int = 3
    hold_ms: float = 20.0  # the host time one batch of reps may take to queue behind a spin kernel
    host_loop: int = 20_000
    process_repeats: int = 3
    fresh_processes: int = 0  # at least this many fresh processes a measurement (0: each case's own count)


class HostData:
    """Fresh random host arrays, shared by the libraries (same numbers for each) and by cases."""

    def __init__(self, seed: int = 20251200) -> None:
        self._rng = np.random.default_rng(seed)
        self._cache: dict[tuple[Input, int, int], np.ndarray] = {}
        self._filling: threading.Thread | None = None

    def get(self, spec: Input, rotation: int, position: int) -> np.ndarray:
        """The array for input ``position`` of rotating set ``rotation`` (distinct numbers for each)."""
        if self._filling is not None:
            self._filling.join()
            self._filling = None
        key = (spec, rotation, position)
        if key not in self._cache:
            self._cache[key] = self._make(spec)
        return self._cache[key]

    def prefetch(self, cases: Iterable[Case], settings: Settings) -> None:
        """Make every input of ``cases`` on a thread now, at a low priority; ``get`` waits for it.
        The run makes them while its fresh processes run: a full run's 8.2 GB took about 35 s of
        one core on a workstation, all of it between the in-process cases' timings before."""
        keys = [(spec, s, p) for case in cases for s in range(sets_of(case, settings))
                for p, spec in enumerate(case.inputs)]

        def fill() -> None:
            with contextlib.suppress(OSError):  # (Linux: a thread's own nice value, below the processes')
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
            for key in keys:
                if key not in self._cache:
                    self._cache[key] = self._make(key[0])

        self._filling = threading.Thread(target=fill, name="benchmarks host data", daemon=True)
        self._filling.start()

    def _make(self, spec: Input) -> np.ndarray:
        host = np.float64 if spec.dtype == "float64" else np.float32
        if spec.fill == "classes":
            return self._rng.integers(0, 4, spec.shape, dtype=np.int64)
        a = self._rng.random(spec.shape, dtype=host)
        if spec.fill == "spd":
            n = spec.shape[-1]
            a = (a + a.T) / 2
            a[np.diag_indices(n)] += n  # rows sum to < n off the diagonal: positive definite
        return a


def sets_needed(case: Case, settings: Settings) -> int:
    """Rotating input sets: together at least four times the L2 cache."""
    per_set = sum(i.nbytes for i in case.inputs)
    return max(1, min(settings.max_sets, math.ceil(4 * settings.l2_bytes / max(per_set, 1))))


def sets_of(case: Case, settings: Settings) -> int:
    """The input sets a case's measure uploads: a device timing's rotating ones, one otherwise."""
    return sets_needed(case, settings) if case.kind == "device" else 1


def _classify(e: BaseException) -> Result:
    return Result("n/a" if isinstance(e, MISSING) else "error", describe(e))


def _prepare(lib: Library, case: Case, data: HostData, sets: int) -> list[tuple[Any, ...]]:
    out = []
    for s in range(sets):
        arrays = tuple(lib.to_device(data.get(spec, s, p), spec.dtype) for p, spec in enumerate(case.inputs))
        out.append(case.setup(lib, *arrays) if case.setup else arrays)
    lib.synchronize()
    return out


def _finished(lib: Library, op: Any) -> Any:
    """``op`` with its result finished (``Library.finish``): each call queues all its work."""
    return lambda lib_, *args: lib.finish(op(lib_, *args))


def _device(lib: Library, case: Case, data: HostData, settings: Settings) -> Result:
    op = _finished(lib, case.op(lib.name))
    sets = sets_of(case, settings)
    args = _prepare(lib, case, data, sets)
    t0 = time.perf_counter()
    op(lib, *args[0])
    lib.synchronize()
    first = (time.perf_counter() - t0) * 1e3
    for i in range(settings.warmup):
        op(lib, *args[(i + 1) % sets])
    lib.synchronize()
    # The host's cost of queuing one call (it includes any wait of the call for the GPU).
    t0 = time.perf_counter()
    op(lib, *args[0])
    queue_ms = (time.perf_counter() - t0) * 1e3
    start, end = lib.event(), lib.event()
    lib.record(start)
    op(lib, *args[1 % sets])
    lib.record(end)
    lib.synchronize()
    estimate = max(lib.elapsed_ms(start, end), 1e-3)
    reps = int(min(settings.max_reps, max(settings.min_reps, settings.budget_ms // estimate)))
    # Reps in batches, each queued behind a spin kernel long enough for the host to queue the
    # whole batch (hold.py): a rep's events then bracket the GPU's work on it alone.
    batch = int(max(1, min(reps, settings.hold_ms // max(queue_ms, 1e-3))))
    times: list[float] = []
    for first_rep in range(0, reps, batch):
        count = min(batch, reps - first_rep)
        starts = [lib.event() for _ in range(count)]
        ends = [lib.event() for _ in range(count)]
        lib.hold(2 * count * queue_ms + 0.1)
        for i in range(count):
            lib.record(starts[i])
            op(lib, *args[(first_rep + i) % sets])
            lib.record(ends[i])
        lib.synchronize()
        times += [lib.elapsed_ms(s, e) for s, e in zip(starts, ends)]
    return Result("ok", median_ms=statistics.median(times), times_ms=times, first_call_ms=first,
                  reps=reps, sets=sets, budget_ms=settings.budget_ms)


def _host(lib: Library, case: Case, data: HostData, settings: Settings) -> Result:
    """Wall-clock cost per call of a loop of tiny ops (host-bound: the GPU keeps up)."""
    op = _finished(lib, case.op(lib.name))
    (args,) = _prepare(lib, case, data, sets_of(case, settings))
    t0 = time.perf_counter()
    op(lib, *args)
    lib.synchronize()
    first = (time.perf_counter() - t0) * 1e3
    for _ in range(1000):
        op(lib, *args)
    lib.synchronize()
    per_call = []
    for _ in range(settings.process_repeats):
        t0 = time.perf_counter()
        for _ in range(settings.host_loop):
            op(lib, *args)
        lib.synchronize()
        per_call.append((time.perf_counter() - t0) * 1e3 / settings.host_loop)
    return Result("ok", median_ms=statistics.median(per_call), times_ms=per_call, first_call_ms=first,
                  reps=settings.host_loop)


def _workload(lib: Library, case: Case, data: HostData, settings: Settings) -> Result:
    """Wall-clock time of a whole workload that ends with its result on the host (the op fetches
    it): a first call, then the median of ``process_repeats`` more."""
    op = _finished(lib, case.op(lib.name))
    (args,) = _prepare(lib, case, data, sets_of(case, settings))
    times = []
    for _ in range(1 + settings.process_repeats):
        t0 = time.perf_counter()
        op(lib, *args)
        times.append((time.perf_counter() - t0) * 1e3)
    return Result("ok", median_ms=statistics.median(times[1:]), times_ms=times[1:], first_call_ms=times[0],
                  reps=len(times) - 1)


#: The kinds measured in this process (``IN_PROCESS``); ``processes.py`` measures the others.
MEASURES: dict[str, Callable[[Library, Case, HostData, Settings], Result]] = {
    "device": _device,
    "host": _host,
    "workload": _workload,
}


def measure(lib: Library, case: Case, data: HostData, settings: Settings) -> Result:
    """One in-process case on one library; a missing library, dtype or op is "n/a", any other
    exception "error"."""
    try:
        lib.load()
        return MEASURES[case.kind](lib, case, data, settings)
    except Exception as e:  # noqa: BLE001 - a failing case is reported, the run goes on
        return _classify(e)
    finally:
        if lib.ns is not None:
            try:
                lib.synchronize()
                lib.release()
            except Exception:  # noqa: BLE001 - a broken device is reported by the next case
                pass
