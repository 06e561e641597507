"""The ``linalg`` plugin: matmul, tensordot, vecdot, matrix_transpose and the ``linalg`` extension.

Each module lists what it provides in ``IMPLS``; the hook only gathers them.
``linalg.LinAlgError`` (a ValueError) is what singular input raises.
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import decompositions, norms, products, solvers
from .common import LinAlgError


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*products.IMPLS, *decompositions.IMPLS, *solvers.IMPLS, *norms.IMPLS,
            Impl("linalg.LinAlgError", LinAlgError)]
