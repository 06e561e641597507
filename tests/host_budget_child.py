"""The program ``test_host_budget`` runs under callgrind: ``CALLS`` computed ``a + b`` of 16 float32
over a recording driver (launches recorded, nothing runs). MODE: ``eager`` (fusion off), ``deferred``
(fusion on, every result deferred, then computed) or ``lone`` (fusion on as users run it: the lane
has seen its results computed alone, ``deferred.LONE_STREAK``, and runs eagerly but for samples);
or ``chain``: ``CALLS`` operations of axpy_loop's chain, ``y = x * 0.5 + y`` on 4096 float32 (fusion
on: each deferred, the chain computed by its fused kernel at each ``deferred.MAX_NODES``).

    python tests/host_budget_child.py MODE CALLS CACHE_DIR
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from helpers import RecordingDriver
from rocm_array import fusion
from rocm_array.devices import Device
from rocm_array.runtime import nvidia
from rocm_array.runtime.compiler import Compiler
from rocm_array.runtime.gpu import GpuRuntime
from rocm_array_plugins.elementwise import deferred

import rocm_array as xp

#: Calls before the counted ones: every kernel loaded, every cache filled.
WARM = 200


def main(mode: str, calls: int, cache: Path) -> None:
    deferred.COMPILE_IN_BACKGROUND = False
    fusion.set_enabled(mode != "eager")
    if mode == "deferred":
        deferred.LONE_STREAK = 1 << 62
    driver = RecordingDriver()
    rt = GpuRuntime(driver)  # type: ignore[arg-type]
    rt.compiler = Compiler(nvidia.NvrtcRtc(), "sm_90", 32, cache)
    device = Device("gpu", 0, rt)
    if mode == "chain":
        x = xp.empty((4096,), dtype=xp.float32, device=device)
        y = xp.empty((4096,), dtype=xp.float32, device=device)
        for k in range(deferred.MAX_NODES):  # (every chain length's kernel ready: the last may be any)
            z = y
            for _ in range(k):
                z = x * 0.5 + z
            fusion.compute(z)
        gc.collect()
        gc.disable()
        for n in (WARM, calls):
            for _ in range(n // 2):
                y = x * 0.5 + y
            fusion.compute(y)
            driver.launches.clear()
        return
    a = xp.empty((16,), dtype=xp.float32, device=device)
    b = xp.empty((16,), dtype=xp.float32, device=device)
    gc.collect()
    gc.disable()  # (the collector's passes fall at different calls from run to run: +-10,000 a call)
    for n in (WARM, calls):
        for _ in range(n):
            fusion.compute(a + b)
        driver.launches.clear()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))
