"""The ``elementwise`` plugin: elementwise functions and operators, creation,
manipulation, indexing, where/clip and the data type functions.

Each module lists what it provides in ``IMPLS``; the hook gathers them, after ``cpu``, ``gpu``
and ``gpu_indexing`` fill the tables of ``backs`` (no GPU is touched until a gpu back is called).
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import cpu, creation, data_types, gpu, gpu_indexing, indexing, manipulation, operators, where


@hookimpl
def rocm_array_functions() -> list[Impl]:
    for module in (cpu, gpu, gpu_indexing):
        module.register()
    return [*operators.IMPLS, *data_types.IMPLS, *creation.IMPLS, *manipulation.IMPLS, *indexing.IMPLS,
            *where.IMPLS]


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *gpu_indexing.kernel_sources()]
