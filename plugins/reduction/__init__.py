"""The ``reduction`` plugin: statistical, searching, sorting, set and utility functions.

Each module lists what it provides in ``IMPLS``; the hook only gathers them. The
gpu modules add their backs to the modules' tables when imported (no GPU is
touched until a kernel is launched).
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import cumulative, diff, gpu, gpu_sort, searching, sets, sorting, table


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*table.IMPLS, *cumulative.IMPLS, *searching.IMPLS, *sorting.IMPLS, *sets.IMPLS, *diff.IMPLS]


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *gpu_sort.kernel_sources()]
