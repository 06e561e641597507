"""The ``elementwise`` plugin: elementwise functions and operators, creation,
manipulation, indexing, where/clip and the data type functions.

Each module lists what it provides in ``IMPLS``; the hook only gathers them. ``gpu`` and
``gpu_indexing`` add the gpu backs to the fronts' tables and list their kernels.
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import creation, data_types, gpu, gpu_indexing, indexing, manipulation, operators, where


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*operators.IMPLS, *data_types.IMPLS, *creation.IMPLS, *manipulation.IMPLS, *indexing.IMPLS,
            *where.IMPLS]


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *gpu_indexing.kernel_sources()]
