"""The ``linalg`` plugin: matmul, tensordot, vecdot, matrix_transpose and the ``linalg`` extension.

Each module lists what it provides in ``IMPLS``; the hook only gathers them.
``linalg.LinAlgError`` (a ValueError) is what singular input raises. The gpu
modules add their backs to the tables of ``backs`` when imported (no GPU is
touched until a gpu back is called).
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import decompositions, gpu, gpu_lapack, norms, products, solvers  # noqa: F401 - gpu modules add their backs
from .common import LinAlgError


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*products.IMPLS, *decompositions.IMPLS, *solvers.IMPLS, *norms.IMPLS,
            Impl("linalg.LinAlgError", LinAlgError)]


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return gpu.kernel_sources()
