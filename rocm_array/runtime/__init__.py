"""GPU runtimes: one module per platform behind one protocol (``protocol.Runtime``).

Only the platform modules (``amd``: hip-python, ``nvidia``: cuda-bindings)
import the bindings. The platform is chosen at run time: the first of
``amd``, ``nvidia`` that finds devices, or the one ``ROCM_ARRAY_PLATFORM``
names (``sim``, the CPU simulator of ``sim.py``, only then). A missing binding or
driver means no GPU, with the reason recorded.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

from .protocol import Runtime
from .vendor import PIP

__all__ = ["discover", "count", "PLATFORMS", "INSTALL", "VISIBLE_VAR"]

PLATFORMS = ("amd", "nvidia")
#: Platforms used only when ROCM_ARRAY_PLATFORM names them.
ON_REQUEST = ("sim",)
#: What to install for each platform (its bindings), as error messages say it.
INSTALL = {"amd": f"hip-python ({PIP['amd']})",
           "nvidia": f"cuda-bindings with NVRTC ({PIP['nvidia']})",
           "sim": "the simulator"}
#: The variable that selects and orders each platform's devices for a process (the simulator
#: follows AMD's).
VISIBLE_VAR = {"amd": "HIP_VISIBLE_DEVICES", "nvidia": "CUDA_VISIBLE_DEVICES", "sim": "HIP_VISIBLE_DEVICES"}


def _candidates() -> tuple[tuple[str, ...], str]:
    """The platforms to try, in order, or none and why (ROCM_ARRAY_PLATFORM names no platform)."""
    forced = os.environ.get("ROCM_ARRAY_PLATFORM", "").strip().lower()
    if forced and forced not in PLATFORMS + ON_REQUEST:
        return (), f"ROCM_ARRAY_PLATFORM={forced!r} is not one of {', '.join(PLATFORMS + ON_REQUEST)}"
    return ((forced,) if forced else PLATFORMS), ""


@functools.cache
def _counter(name: str) -> ModuleType | None:
    """Platform ``name``'s module for ``count``, or None where it does not import (its bindings
    missing). Once a process: Python retries a failed import at every call, and amd's took 1.3 ms
    without hip-python, paid by every chunk a Dask worker sent on an NVIDIA machine (``count``
    through ``placement.visible_gpus``)."""
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except Exception:  # noqa: BLE001 - a platform that is missing counts no devices
        return None


def count() -> tuple[str, int]:
    """The platform discovery would choose and how many devices its driver reports, without
    opening any (no context, no stream, no compiler): what a launcher of one process per GPU
    needs before the processes exist. ``("", 0)`` when there is none (``discover`` says why)."""
    for name in _candidates()[0]:
        module = _counter(name)
        if module is None:
            continue
        try:
            found = int(module.count_devices())
        except Exception:  # noqa: BLE001 - a platform without a driver counts no devices
            continue
        if found:
            return name, found
    return "", 0


def discover() -> tuple[list[Runtime], list[str]]:
    """The GPUs present, one Runtime each, and the reasons any platform is missing."""
    from .gpu import GpuRuntime  # at discovery, not at import: its compiler and staging cost ~30 ms

    candidates, why = _candidates()
    if why:
        return [], [why]
    problems: list[str] = []
    for name in candidates:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ImportError as exc:
            problems.append(f"{name}: {INSTALL[name]} is not importable ({exc})")
            continue
        try:
            if name in PLATFORMS and module.count_devices():
                from .vendor import preload
                preload(name)  # the vendor libraries' files load while the devices open
            found: list[Runtime] = [GpuRuntime(d) for d in module.open_devices()]
        except Exception as exc:  # no driver library, no device, no run-time compiler…
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if found:
            return found, problems
        problems.append(f"{name}: the driver reports no devices")
    return [], problems
