"""The ``fft`` plugin: the standard's ``fft`` extension.

Each module lists what it provides in ``IMPLS``; the hook gathers them, after ``cpu`` and
``gpu`` fill the table of ``backs`` (no GPU is touched until a transform is called).
"""

from __future__ import annotations

import functools

from rocm_array.hookspecs import Impl, hookimpl

from . import cpu, gpu, helpers, transforms


@functools.cache
def _register() -> None:
    cpu.register()
    gpu.register()


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*transforms.IMPLS, *helpers.IMPLS]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise']
