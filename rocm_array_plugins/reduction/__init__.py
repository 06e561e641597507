"""The ``reduction`` plugin: statistical, searching, sorting, set and utility functions.

Each module lists what it provides in ``IMPLS``; the hook gathers them, after ``cpu``,
``gpu`` and ``gpu_sort`` fill the tables of ``backs`` (no GPU is touched until a kernel is
launched).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, Own, hookimpl

from . import cpu, cumulative, diff, gpu, gpu_sort, searching, sets, sorting, table


_register = register_once(cpu, gpu, gpu_sort)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*table.IMPLS, *cumulative.IMPLS, *searching.IMPLS, *sorting.IMPLS, *sets.IMPLS, *diff.IMPLS]


#: This plugin's own functions, for the plugins that need them (see ``Own``).
own = Own(rocm_array_functions)


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *gpu_sort.kernel_sources()]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise']
