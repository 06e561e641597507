"""The ``elementwise`` plugin: elementwise functions and operators, creation,
manipulation, indexing, where/clip and casting."""

from __future__ import annotations

from rocm_array.hookspecs import Impl, hookimpl

from . import creation
from .table import UFUNCS


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [Impl(u.name, u) for u in UFUNCS] + [Impl("asarray", creation.asarray)]
