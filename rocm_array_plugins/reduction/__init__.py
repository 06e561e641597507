"""The ``reduction`` plugin: statistical, searching, sorting, set and utility functions.

Each front module (``front_*``: the user-facing functions) and ``table`` (the rows of
``front_reduction.Reduction``) list what they provide in ``IMPLS``; the hook gathers them, after
``cpu``, ``gpu`` and ``gpu_sort`` fill the tables of ``backs`` (no GPU is touched until a kernel
is launched).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, Own, hookimpl

from . import (cpu, front_cumulative, front_diff, front_searching, front_sets, front_sorting, gpu, gpu_sort,
               table)


_register = register_once(cpu, gpu, gpu_sort)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*table.IMPLS, *front_cumulative.IMPLS, *front_searching.IMPLS, *front_sorting.IMPLS, *front_sets.IMPLS,
            *front_diff.IMPLS]


#: This plugin's own functions, for the plugins that need them (see ``Own``).
own = Own(rocm_array_functions)


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *gpu_sort.kernel_sources()]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise']
