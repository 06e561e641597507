"""The ``fft`` plugin: the standard's ``fft`` extension.

Each module lists what it provides in ``IMPLS``; the hook gathers them, after ``cpu`` and
``gpu`` fill the table of ``backs`` (no GPU is touched until a transform is called).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, hookimpl

from . import cpu, gpu, helpers, transforms


_register = register_once(cpu, gpu)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*transforms.IMPLS, *helpers.IMPLS]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise']
