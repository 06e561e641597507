"""The ``fft`` plugin: the standard's ``fft`` extension.

Each front module (``front_*``: the user-facing functions) lists what it provides in ``IMPLS``;
the hook gathers them, after ``cpu`` and ``gpu`` fill the table of ``backs`` (no GPU is touched
until a transform is called).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, hookimpl

from . import cpu, front_helpers, front_transforms, gpu


_register = register_once(cpu, gpu)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*front_transforms.IMPLS, *front_helpers.IMPLS]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise']
