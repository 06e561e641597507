"""The ``fft`` plugin: the standard's ``fft`` extension.

Each module lists what it provides in ``IMPLS``; the hook only gathers them.
The transforms' gpu back is registered here (no GPU is touched until it is called).
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import gpu, helpers, transforms

transforms.BACKS["gpu"] = gpu.transform


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*transforms.IMPLS, *helpers.IMPLS]
