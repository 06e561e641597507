"""The ``linalg`` plugin: matmul, tensordot, vecdot, matrix_transpose and the ``linalg`` extension.

Each front module (``front_*``: the user-facing functions) lists what it provides in ``IMPLS``;
the hook gathers them, after ``cpu``, ``gpu`` and ``gpu_lapack`` fill the tables of ``backs`` (no
GPU is touched until a gpu back is called). ``linalg.LinAlgError`` (a ValueError) is what singular
input raises.
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, Own, hookimpl

from . import cpu, front_decompositions, front_norms, front_products, front_solvers, gpu, gpu_lapack, small_gemm
from .common import LinAlgError


_register = register_once(cpu, gpu, gpu_lapack)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*front_products.IMPLS, *front_decompositions.IMPLS, *front_solvers.IMPLS, *front_norms.IMPLS,
            Impl("linalg.LinAlgError", LinAlgError)]


#: This plugin's own functions, for the plugins that need them (see ``Own``).
own = Own(rocm_array_functions)


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *small_gemm.kernel_sources()]


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise', 'reduction']
