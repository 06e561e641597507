"""The ``elementwise`` plugin: elementwise functions and operators, creation,
manipulation, indexing, where/clip and the data type functions.

Each module lists what it provides in ``IMPLS``; the hook only gathers them.
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import creation, data_types, indexing, manipulation, operators, where


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*operators.IMPLS, *data_types.IMPLS, *creation.IMPLS, *manipulation.IMPLS, *indexing.IMPLS,
            *where.IMPLS]
