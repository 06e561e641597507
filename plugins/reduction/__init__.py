"""The ``reduction`` plugin: statistical, searching, sorting, set and utility functions.

Each module lists what it provides in ``IMPLS``; the hook only gathers them.
"""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import cumulative, diff, searching, sets, sorting, table


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [*table.IMPLS, *cumulative.IMPLS, *searching.IMPLS, *sorting.IMPLS, *sets.IMPLS, *diff.IMPLS]
