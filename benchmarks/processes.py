"""The fresh-process cases (``import``, ``first_call_cold``/``_warm``, ``from_start``): the processes
they need, run several at a time with none on the GPU during another's timed call, and each
case's Result.

Why several at a time. One at a time, the fresh processes took most of a full run: it was stopped
at 420 s, 59 cases of 74 done (#37). PyTorch's import alone is 3.67 s a process (the ``import``
case, H100, 517b38a) and a run started about 50 PyTorch processes, 180 in all. Nearly all of a
PyTorch process is host work (the interpreter, the import) that needs no GPU and overlaps on the
GPU machine's 16 cores.

What keeps the figures honest:

- Each timed first call is still its process's first, right after the import: nothing waits
  between the two (a wait would let rocm_array's preload thread finish and flatter a first matmul).
  Only the start of a process is ever put off.
- No other process touches the GPU during a timed call: a process is started when, as expected
  from the earlier ones, its GPU span (from its import's end through the GPU's opening, the upload
  and the calls to its exit and the context's teardown) meets no other process's call, and its
  call no other's span. The driver serializes context creation and teardown, and contexts
  time-slice the GPU, so a first call that met another process's opening, exit or kernels would be
  timed with that process's work in it. (One process's exit may overlap the next one's opening:
  neither is timed.)
- Checked, not assumed: each child reports its GPU span and its first call on the machine's
  monotonic clock (``benchmarks.child``). A sample whose call overlapped another process's GPU span
  is discarded and taken again in a fresh process (``discarded`` in the Result); after ``MAX_TRIES``
  it is taken with no other process alive. The retake reserves at least the span its discarded try
  took, so a slow call is measured again rather than replaced by a fast one.
- A cold process starts with empty caches of its own: its library's kernel cache and the compute
  cache that NVRTC shares with the driver (``COMPUTE_CACHE_VAR``), where an earlier process's
  compiles would otherwise be found.
- Host load: at most ``AT_ONCE`` processes are alive (``--at-once``), so the timed one shares the
  host with at most three other processes' imports on the GPU machine. The most that were alive
  during each kept call is in the Result (``at_once``). The cases whose timed span is the import itself (``import``, ``*_from_start``) run
  with no other process alive. The parent makes the in-process cases' host data on one thread
  meanwhile, at a lower priority (``HostData.prefetch``: about 35 s of one core on a 2-core
  workstation, where the fresh processes took over 100 s on the GPU machine), before the
  import-timed processes, which run last.

Fewer processes, same medians: cases that time the same child command in the same kernel-cache
state share its processes and report the median of all of them (``first_call_cold`` and
``first_add_cold`` are both a first ``a + b``: three processes, not three and one); PyTorch keeps no
disk kernel cache, so its cold and warm cases are one measurement; and the first process of a cold
measurement leaves the cache that its warm measurement reads, where a separate process filled it
before; and a library's import is timed in its ``from_start`` processes, which import it first and
alone, as an import process does. A full run (80 cases) starts 115 processes: 46 rocm_array, 41
CuPy, 28 PyTorch.
"""

from __future__ import annotations

import json
import math
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from .cases import Case
from .first_calls import unavailable
from .libs import LIBRARIES
from .measure import REPO, Result, Settings

__all__ = ["AT_ONCE", "KINDS", "Key", "Job", "Run", "Forecast", "Scheduler", "Plan", "processes_arg", "earliest",
           "run_jobs", "measure"]

#: Processes alive at once: a quarter of the host's cores, at most 4. An import keeps about one
#: core busy (the interpreter imports on one thread), so on the GPU machine's 16 the timed process
#: and three others' imports leave 12 idle for its own threads (rocm_array's cold compiles, a vendor
#: library's first set-up). Where cores are few, company shows: on a 2-core workstation, on the
#: simulator (whose GPU is the CPU), four at once took the median cold first add from 165 and 183 ms
#: to 230 and 347 ms, exp's from 367 and 147 to 511 and 436 ms (two runs each). More than four buy
#: little: the GPU's openings, one after another, bound the run (the model below: 4 at once 124 s,
#: 6 117 s, 8 117 s, one at a time 238 s). ``--at-once 1`` runs them one at a time, to compare.
AT_ONCE = max(1, min(4, (os.cpu_count() or 1) // 4))
#: Tries of a sample in company before it is taken with no other process alive.
MAX_TRIES = 3
#: How far a process's import may stray from its library's median in this run, as a fraction: its
#: GPU span and call are reserved from the earliest to the latest it may reach them.
LEAD_SPREAD = 0.05
#: A reservation's call and GPU span over the longest its measurement took before in this run.
#: It and LEAD_SPREAD set how tightly processes are packed, not what is kept (overlaps are checked).
#: Chosen on a model of a full run's 121 processes, not a measurement (a throwaway script driving
#: this Scheduler on a virtual clock; imports, first calls from BENCHMARKS.md, 5% either way; the
#: GPU's opening 0.3 s, the exit 0.15 s): 0.05 and 1.1 took 124 s with 7 samples taken again, 0.1 and
#: 1.25 137 s with 6, 0.02 and 1.0 123 s with 19. With an opening of 0.6 s and an exit of 0.4 s:
#: 170 s, against 302 s one at a time.
SPAN_MARGIN = 1.1
#: A child still running after this long is stopped; its sample is an error.
TIMEOUT_S = 300

#: The disk kernel caches a fresh process can start cold with (PyTorch ships compiled kernels).
CACHE_ENV = {"rocm_array": "ROCM_ARRAY_CACHE_DIR", "cupy": "CUPY_CACHE_DIR"}
#: The compute cache that NVRTC 13 (rocm_array's and CuPy's compiler) and the driver share: NVRTC
#: keeps each program's machine code there, found by its PTX, so a "cold" process whose kernels an
#: earlier process had compiled, of this or the other library or of another run, compiled them
#: fast (H200, a first mean over axis 0 in a fresh process: 420 ms with this cache empty, 73 and 85
#: ms with it as the first process had left it; a trivial kernel: 240 ms, 47 with the cache off).
#: The order of the processes chose who paid. A cold process gets an empty one of its own.
COMPUTE_CACHE_VAR = "CUDA_CACHE_PATH"
#: The child command of each case kind measured here.
COMMANDS = {"import": "import", "first_call_cold": "first_call", "first_call_warm": "first_call",
            "from_start": "from_start"}
KINDS = tuple(COMMANDS)
#: The commands whose timed span includes the import: their processes run with no other alive.
ALONE = ("import", "from_start")
#: The figure each command prints.
FIGURE = {"import": "import_ms", "first_call": "first_ms", "from_start": "first_ms"}
NO_CACHE = "no disk kernel cache: cold and warm are the same"

Span = tuple[float, float]
Window = tuple[Span, Span]  # a process's GPU span and its call


@dataclass(frozen=True)
class Key:
    """One measurement: a child command on one library in one kernel-cache state (``cold``, ``warm``,
    or empty where the library keeps no disk cache, so that cold and warm are one)."""

    command: str
    lib: str
    family: str = ""
    state: str = ""

    @staticmethod
    def of(case: Case, lib: str) -> Key:
        command = COMMANDS[case.kind]
        if command == "import":
            return Key(command, lib)
        state = ("cold" if case.kind == "first_call_cold" else "warm") if lib in CACHE_ENV else ""
        return Key(command, lib, case.family, state)

    def argv(self) -> list[str]:
        return [self.command, self.lib, *([self.family] if self.family else [])]


@dataclass(eq=False)
class Job:
    """One process to run: its measurement, its kernel-cache folder, whether its figure counts (a fill
    only leaves a cache behind), whether it runs alone, and the job that fills the cache it reads."""

    key: Key
    cache: str | None = None
    timed: bool = True
    alone: bool = False
    after: Job | None = None
    tries: int = 0

    def env(self) -> dict[str, str]:
        """What the child's environment adds: its kernel-cache folder, and a cold one's own empty
        compute cache (``COMPUTE_CACHE_VAR``), made here."""
        if not self.cache:
            return {}
        env = {CACHE_ENV[self.key.lib]: self.cache}
        if self.key.state == "cold":
            env[COMPUTE_CACHE_VAR] = f"{self.cache}.nv"
            os.makedirs(env[COMPUTE_CACHE_VAR], exist_ok=True)
        return env

    def again(self) -> Job:
        """This job in another fresh process (a cold one with another empty cache); alone after MAX_TRIES."""
        tries = self.tries + 1
        cache = f"{self.cache}.{tries}" if self.key.state == "cold" and self.cache else self.cache
        return replace(self, cache=cache, tries=tries, alone=self.alone or tries >= MAX_TRIES)


@dataclass(eq=False)
class Run:
    """An ended process: its job, its start and end (``time.monotonic()``), the JSON it printed (or
    ``{"error": ...}``), and whether its sample was kept."""

    job: Job
    start: float
    end: float
    out: dict[str, Any]
    kept: bool = False

    @property
    def gpu(self) -> Span:
        """When it may have used the GPU: from its import's end (its start, if it did not say) to its exit."""
        return self.out.get("gpu_from") or self.start, self.end

    @property
    def call(self) -> Span | None:
        """Its timed first call, where it printed one."""
        call = self.out.get("call")
        return (call[0], call[1]) if call else None

    def to_json(self, origin: float) -> dict[str, Any]:
        """What ``results.json`` keeps of it (``processes``), in seconds from ``origin``: enough to see
        why a sample was taken again, and how the processes were packed."""
        def at(t: float) -> float:
            return round(t - origin, 3)

        call = self.call
        return {"argv": self.job.key.argv(), "state": self.job.key.state, "timed": self.job.timed,
                "alone": self.job.alone, "tries": self.job.tries, "kept": self.kept,
                "start": at(self.start), "gpu_from": at(self.gpu[0]), "call": call and [at(call[0]), at(call[1])],
                "end": at(self.end), "figure": self.out.get(FIGURE[self.job.key.command]),
                **({"failed": (self.out.get("na") or self.out["error"])[:200]}
                   if "na" in self.out or "error" in self.out else {})}

    def alive_with(self, runs: Iterable[Run]) -> int:
        """How many processes were alive during its call (its whole life if none): itself and those of ``runs``."""
        a, b = self.call or (self.start, self.end)
        return 1 + sum(1 for r in runs if r is not self and r.start < b and a < r.end)


class Forecast:
    """When a process will touch the GPU and make its call, from this run's earlier processes: its
    library's lead (its start to the import's end), and its measurement's opening (to the call), call
    and exit, each measured from the import's end."""

    def __init__(self) -> None:
        self.leads: dict[str, list[float]] = {}
        self.phases: dict[Key, list[tuple[float, float, float]]] = {}  # (call start, call end, exit)

    def learn(self, run: Run) -> None:
        gpu_from, call = run.out.get("gpu_from"), run.call
        if gpu_from and call:
            self.leads.setdefault(run.job.key.lib, []).append(gpu_from - run.start)
            self.phases.setdefault(run.job.key, []).append((call[0] - gpu_from, call[1] - gpu_from, run.end - gpu_from))

    def window(self, job: Job) -> Window | None:
        """The GPU span and the call to reserve for ``job``, in seconds after its start; None until a
        process of its library and command has reported them (the job then reserves the GPU from its
        start to its exit). A measurement not seen yet gets the extremes of its library and command in
        the same cache state, else in any."""
        k = job.key
        leads = self.leads.get(k.lib)
        seen = (self.phases.get(k) or self._like(k, lambda o: o.state == k.state) or self._like(k, lambda o: True))
        if not leads or not seen:
            return None
        lead = statistics.median(leads)
        lo, hi = lead * (1 - LEAD_SPREAD), lead * (1 + LEAD_SPREAD)
        first_call = min(c0 for c0, _, _ in seen) / SPAN_MARGIN
        return ((lo, hi + max(end for _, _, end in seen) * SPAN_MARGIN),
                (lo + first_call, hi + max(c1 for _, c1, _ in seen) * SPAN_MARGIN))

    def _like(self, k: Key, same: Callable[[Key], bool]) -> list[tuple[float, float, float]]:
        return [p for o, v in self.phases.items() if (o.command, o.lib) == (k.command, k.lib) and same(o) for p in v]


def processes_arg(text: str) -> int:
    """``--at-once``'s and ``--processes``'s value: a whole number of processes, at least 1."""
    n = int(text)
    if n < 1:
        raise ValueError(f"a number of processes is at least 1, not {n}")
    return n


def earliest(window: Window | None, busy: Iterable[Window], now: float) -> float:
    """The first start at or after ``now`` at which a process's GPU span and call (``window``, after its
    start; from its start with no end when None) meet no call and no span of the ``busy`` ones
    (absolute); inf while one of those has no end."""
    (s0, s1), (c0, c1) = window or ((0.0, math.inf), (0.0, math.inf))
    busy = list(busy)
    starts = {now, *(b_call[1] - s0 for _, b_call in busy), *(b_span[1] - c0 for b_span, _ in busy)}
    for start in sorted(t for t in starts if t >= now):
        if all(_apart((start + s0, start + s1), b_call) and _apart((start + c0, start + c1), b_span)
               for b_span, b_call in busy):
            return start
    return math.inf


def _apart(a: Span, b: Span) -> bool:
    return a[1] <= b[0] or b[1] <= a[0]


class Scheduler:
    """Which process to start when, and which ended samples to keep: ``run_jobs``'s decisions, with
    the clock's readings given to it (it reads none)."""

    def __init__(self, jobs: Iterable[Job], at_once: int = AT_ONCE) -> None:
        self.pending = list(jobs)
        self.at_once = at_once
        self.alive: dict[Job, float] = {}  # each running job's start
        self.busy: dict[Job, Window] = {}  # the GPU span and call reserved for each running job
        self.ended: set[Job] = set()
        self.runs: list[Run] = []
        self.undecided: list[Run] = []
        self.forecast = Forecast()

    @property
    def done(self) -> bool:
        return not self.pending and not self.alive

    def next(self, now: float) -> tuple[Job | None, float]:
        """The job to start now, or None and when to look again (inf: when a process ends)."""
        if len(self.alive) >= self.at_once or any(job.alone for job in self.alive):
            return None, math.inf
        ready = [job for job in self.pending if job.after is None or job.after in self.ended]
        shared = [job for job in ready if not job.alone]
        if not shared:  # a job that runs alone waits for every other to end
            if ready and not self.alive and all(job.alone for job in self.pending):
                return ready[0], now
            return None, math.inf
        windows = [(self.forecast.window(j), j) for j in shared]
        if any(w is None for w, _ in windows):
            # Nothing like it has run yet: it goes first (alone on the GPU) and teaches the forecast
            # its library's spans, so that the library's later processes can share the GPU's time.
            windows = [(w, j) for w, j in windows if w is None]
        at, job = min(((earliest(w, self.busy.values(), now), j) for w, j in windows), key=lambda t: t[0])
        return (job, now) if at <= now else (None, at)

    def start(self, job: Job, now: float) -> None:
        self.pending.remove(job)
        self.alive[job] = now
        window = self.forecast.window(job)
        if window is None:
            self.busy[job] = ((now, math.inf), (now, math.inf))
        else:
            (s0, s1), (c0, c1) = window
            self.busy[job] = ((now + s0, now + s1), (now + c0, now + c1))

    def end(self, run: Run) -> None:
        """A process ended: learn its spans, then keep or take again every sample that can be judged."""
        del self.alive[run.job], self.busy[run.job]
        self.ended.add(run.job)
        self.forecast.learn(run)
        self.runs.append(run)
        self.undecided.append(run)
        for r in list(self.undecided):
            call = r.call
            if call is not None and r.job.timed:
                if any(start <= call[1] for start in self.alive.values()):
                    continue  # a process alive during the call has not yet said when it had the GPU
                r.kept = not any(o is not r and o.gpu[0] < call[1] and call[0] < o.gpu[1] for o in self.runs)
                if not r.kept:
                    self.pending.append(r.job.again())
            else:
                r.kept = True  # nothing timed to check: a fill, a process alone, a failure
            self.undecided.remove(r)


class Plan:
    """The processes that measure some (case, library) pairs, and each pair's Result from their runs."""

    def __init__(self, pairs: Iterable[tuple[Case, str]], settings: Settings, folder: Path) -> None:
        self.keys: dict[tuple[str, str], Key] = {}
        self.figures: dict[tuple[str, str], str] = {}  # what each pair reads of its key's processes' output
        self.missing: dict[tuple[str, str], str] = {}
        counts: dict[Key, int] = {}
        pairs = list(pairs)
        for case, lib in pairs:
            key = Key.of(case, lib)
            reason = (f"{LIBRARIES[lib].module} is not installed" if not LIBRARIES[lib].installed()
                      else key.family and unavailable(key.family, lib))
            if reason:
                self.missing[(case.name, lib)] = reason
                continue
            figure = FIGURE[key.command]
            if key.command == "import":
                # A from_start process times its import as an import process does, alone too: the
                # import reads theirs where the run has them (3.7 s a PyTorch process, three a run).
                starts = [Key.of(c, lib) for c, other in pairs if other == lib and c.kind == "from_start"
                          and not unavailable(c.family, lib)]
                key, figure = (starts[0], "import_ms") if starts else (key, figure)
            self.keys[(case.name, lib)] = key
            self.figures[(case.name, lib)] = figure
            n = max(case.processes or settings.process_repeats, settings.fresh_processes)
            counts[key] = max(counts.get(key, 0), n)
        self.jobs: list[Job] = []
        self.sources: dict[Key, Job] = {}  # the job that fills each warm measurement's cache
        firsts: dict[Key, Job] = {}
        # Cold measurements first: the first process of each fills the cache of its warm one.
        for key, n in sorted(counts.items(), key=lambda kv: kv[0].state == "warm"):
            alone = key.command in ALONE
            if key.state == "cold":
                jobs = [Job(key, str(folder / f"{'-'.join(key.argv())}-cold-{i}"), alone=alone) for i in range(n)]
                firsts[key] = jobs[0]
            elif key.state == "warm":
                cold = replace(key, state="cold")
                source = firsts.get(cold)
                if source is None:
                    source = Job(cold, str(folder / f"{'-'.join(key.argv())}-fill"), timed=False)
                    self.jobs.append(source)
                self.sources[key] = source
                jobs = [Job(key, source.cache, alone=alone, after=source) for _ in range(n)]
            else:
                jobs = [Job(key, alone=alone) for _ in range(n)]
            self.jobs += jobs

    def results(self, runs: list[Run]) -> dict[tuple[str, str], Result]:
        """Each pair's Result: the median of its measurement's kept samples."""
        measured = {(key, self.figures[pair]) for pair, key in self.keys.items()}
        by_key = {m: self._result(*m, runs) for m in measured}
        return {**{pair: Result("n/a", reason) for pair, reason in self.missing.items()},
                **{pair: by_key[(key, self.figures[pair])] for pair, key in self.keys.items()}}

    def _result(self, key: Key, figure: str, runs: list[Run]) -> Result:
        mine = [r for r in runs if r.job.key == key and r.job.timed]
        # Its own processes' failure, or its cache filler's, is its own; an import read from
        # from_start processes counts where they imported, though their op was n/a or failed.
        borrowed = figure != FIGURE[key.command]
        source = None if borrowed else self.sources.get(key)
        for r in [*(r for r in runs if r.job is source), *mine]:
            if borrowed and figure in r.out:
                continue
            if "na" in r.out:
                return Result("n/a", r.out["na"])
            if "error" in r.out:
                return Result("error", r.out["error"])
        kept = [r for r in mine if r.kept]
        times = [r.out[figure] for r in kept]
        return Result("ok", NO_CACHE if key.command == "first_call" and not key.state else "",
                      median_ms=statistics.median(times), times_ms=times, reps=len(times),
                      at_once=max(r.alive_with(runs) for r in kept), discarded=len(mine) - len(kept))


Launch = Callable[[Job, Callable[[Run], None]], None]


def spawn(job: Job, ended: Callable[[Run], None]) -> None:
    """Start ``python -m benchmarks.child`` for ``job``; a thread hands its Run to ``ended`` at its exit."""
    argv = job.key.argv()
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.child", *argv], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **job.env()})

    def wait() -> None:
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        end = time.monotonic()
        lines = stdout.strip().splitlines()
        try:
            out = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
        except json.JSONDecodeError:
            out = None
        ended(Run(job, start, end, out if isinstance(out, dict) else
                  {"error": f"child {' '.join(argv)} failed ({proc.returncode}): {stderr.strip()[-400:]}"}))

    threading.Thread(target=wait, name=f"bench child {' '.join(argv)}", daemon=True).start()


def run_jobs(jobs: Iterable[Job], at_once: int = AT_ONCE, launch: Launch = spawn,
             progress: Callable[[Run], None] | None = None) -> list[Run]:
    """Run ``jobs``, and the samples taken again, as the Scheduler decides; every Run, kept or not."""
    scheduler = Scheduler(jobs, at_once)
    ended: queue.Queue[Run] = queue.Queue()
    while not scheduler.done:
        job, at = scheduler.next(time.monotonic())
        if job is not None:
            scheduler.start(job, time.monotonic())
            launch(job, ended.put)
            continue
        try:
            runs = [ended.get(timeout=None if at == math.inf else max(0.0, at - time.monotonic()))]
        except queue.Empty:
            continue  # the time to start the next process has come
        while not ended.empty():  # every process that has ended, before the next start is decided
            runs.append(ended.get())
        for run in runs:
            scheduler.end(run)
            if progress is not None:
                progress(run)
    return scheduler.runs


def measure(pairs: Iterable[tuple[Case, str]], settings: Settings, at_once: int = AT_ONCE,
            progress: Callable[[Run], None] | None = None) -> dict[tuple[str, str], Result]:
    """The Result of each (case, library) pair of the kinds in KINDS, keyed by (case name, library)."""
    with tempfile.TemporaryDirectory(prefix="bench-processes-") as folder:
        plan = Plan(pairs, settings, Path(folder))
        return plan.results(run_jobs(plan.jobs, at_once, progress=progress))
