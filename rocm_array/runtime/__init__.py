"""GPU runtimes: one module per platform behind one protocol (``protocol.Runtime``).

Only the platform modules (``amd``: hip-python, ``nvidia``: cuda-bindings)
import the bindings. The platform is chosen at run time: the first of
``amd``, ``nvidia`` that finds devices, or the one ``ROCM_ARRAY_PLATFORM``
names (``sim``, the CPU simulator of ``sim.py``, only then). A missing binding or
driver means no GPU, with the reason recorded.
"""

from __future__ import annotations

import importlib
import os

from .protocol import Runtime
from .vendor import PIP

__all__ = ["discover", "PLATFORMS", "INSTALL"]

PLATFORMS = ("amd", "nvidia")
#: Platforms used only when ROCM_ARRAY_PLATFORM names them.
ON_REQUEST = ("sim",)
#: What to install for each platform (its bindings), as error messages say it.
INSTALL = {"amd": f"hip-python ({PIP['amd']})",
           "nvidia": f"cuda-bindings with NVRTC ({PIP['nvidia']})",
           "sim": "the simulator"}


def discover() -> tuple[list[Runtime], list[str]]:
    """The GPUs present, one Runtime each, and the reasons any platform is missing."""
    from .gpu import GpuRuntime  # at discovery, not at import: its compiler and staging cost ~30 ms

    forced = os.environ.get("ROCM_ARRAY_PLATFORM", "").strip().lower()
    if forced and forced not in PLATFORMS + ON_REQUEST:
        return [], [f"ROCM_ARRAY_PLATFORM={forced!r} is not one of {', '.join(PLATFORMS + ON_REQUEST)}"]
    problems: list[str] = []
    for name in (forced,) if forced else PLATFORMS:
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
