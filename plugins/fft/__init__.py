"""The ``fft`` plugin: the standard's ``fft`` extension.

Each module lists what it provides in ``IMPLS``; the hook only gathers them.
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import helpers, transforms


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*transforms.IMPLS, *helpers.IMPLS]
