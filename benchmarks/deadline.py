"""The run's wall-clock budget (``--total-s``): the fresh-process cases run first and take what their
processes take; the in-process (case, library) pairs then share what is left, each device timing
getting the device time (``Settings.budget_ms``) that the time left allows.

What a pair costs besides its timing (making and uploading its inputs, its first call and warm-up,
a workload's fits, a host loop) is not the budget's to shrink: it is estimated as the mean of the
pairs done so far, and the timings share the rest. No case is ever skipped: when the run is late,
each timing gets ``FLOOR_MS``, and the run says by how much it went over.
"""

from __future__ import annotations

__all__ = ["TOTAL_S", "AIM", "FLOOR_MS", "Deadline"]

#: A full run on one GPU, every case on every library: at most 300 s (#37).
TOTAL_S = 300.0
#: The least device time a timing gets however late the run is. The repeats are at least
#: ``Settings.min_reps`` (10) anyway; 50 ms gives an op of 1 ms fifty, of 0.1 ms five hundred
#: (``max_reps``, 200, caps them), enough for a median (the default budget, 300 ms, is six times it).
FLOOR_MS = 50.0
#: The share of the budget the timings aim to end within. The pairs' cost besides their timing is
#: estimated by the mean so far, and the last ones (the host loops, tiny_add's among them) cost more:
#: with all of it shared, full runs on one GPU ended at 290, 297 and 301 s of 300.
AIM = 0.97


class Deadline:
    """The time left, shared among the in-process (case, library) pairs still to come."""

    def __init__(self, total_s: float, start: float, timed: list[bool]) -> None:
        """``timed``: for each pair to come, in order, whether it is a device timing (with a budget)."""
        self.end = start + total_s * AIM
        self._timed = timed
        self._done = 0
        self._fixed_s = 0.0  # what the pairs done took besides their timing

    def budget_ms(self, now: float, cap_ms: float) -> float:
        """The device time the next pair's timing may spend: the time left, less what the pairs left
        are expected to take besides their timing (the mean so far), shared among the timed ones;
        within [FLOOR_MS, cap_ms]."""
        left = self._timed[self._done:]
        fixed = self._fixed_s / self._done if self._done else 0.0
        share_s = (self.end - now - fixed * len(left)) / max(sum(left), 1)
        return min(cap_ms, max(FLOOR_MS, share_s * 1e3))

    def spent(self, wall_s: float, timing_s: float) -> None:
        """The next pair took ``wall_s``, ``timing_s`` of it in its timed repeats (0 if untimed)."""
        self._done += 1
        self._fixed_s += max(0.0, wall_s - timing_s)
