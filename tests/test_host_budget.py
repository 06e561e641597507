"""The host's cost of one operation, in instructions: ``a + b`` of 16 float32, computed, over a
recording driver, counted by callgrind (#37). Counts, not times: they do not move with the machine.

Each mode runs ``host_budget_child.py`` twice under callgrind, with ``FEW`` and ``MANY`` calls; the
difference over ``MANY - FEW`` is one call's instructions, start-up and imports cancelled out.
CI installs valgrind and sets ROCM_ARRAY_REQUIRE_VALGRIND=1; elsewhere a missing valgrind skips.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FEW, MANY = 200, 2200
#: Instructions per computed ``a + b``, at most. Measured at a01b732 (CPython 3.11, x86-64), three
#: runs: fusion off (each operation launched at once) 36,923-37,034; fusion on (deferred, then
#: computed) 65,607-67,406 (the collector's passes move it). #37's target is about 26,000 for both
#: (the redesign's eager figure): not met. These budgets keep both from growing meanwhile.
BUDGET = {"eager": 40_000, "deferred": 72_000}


def _instructions(fused: bool, calls: int, cache: Path) -> int:
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          str(HERE / "host_budget_child.py"), "1" if fused else "0", str(calls), str(cache)],
                         capture_output=True, text=True, timeout=600, cwd=HERE,
                         env={**os.environ, "PYTHONPATH": str(HERE)})
    assert run.returncode == 0, run.stderr[-2000:]
    found = re.search(r"Collected : (\d+)", run.stderr)
    assert found, run.stderr[-2000:]
    return int(found.group(1))


@pytest.mark.parametrize("mode", ["eager", "deferred"])
def test_an_add_stays_within_its_instruction_budget(mode: str, tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        if os.environ.get("ROCM_ARRAY_REQUIRE_VALGRIND") == "1":
            pytest.fail("ROCM_ARRAY_REQUIRE_VALGRIND=1, and valgrind is not installed")
        pytest.skip("valgrind is not installed (apt install valgrind)")
    pytest.importorskip("cuda.bindings.nvrtc", reason="the recording driver compiles with NVRTC")
    fused = mode == "deferred"
    cache = tmp_path / "kernels"
    subprocess.run([sys.executable, str(HERE / "host_budget_child.py"), "1" if fused else "0", "1", str(cache)],
                   check=True, cwd=HERE, env={**os.environ, "PYTHONPATH": str(HERE)}, timeout=600)  # compiles
    per_call = (_instructions(fused, MANY, cache) - _instructions(fused, FEW, cache)) / (MANY - FEW)
    print(f"{mode}: {per_call:,.0f} instructions per computed a + b")
    assert per_call <= BUDGET[mode], (f"a computed a + b ({mode}) took {per_call:,.0f} instructions, past its "
                                      f"budget of {BUDGET[mode]:,}: find what the change added to the call's path")
