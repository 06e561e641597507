"""An example third-party plugin: adds ``axpy`` and overrides ``add`` with priority 10.

The override counts its calls (``CALLS``) and delegates to the elementwise
plugin's own ``add``, so a test can see which implementation the namespace uses.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from rocm_array.hookspecs import Impl, hookimpl

CALLS = {"add": 0}


def axpy(a: Any, x: Any, y: Any, /) -> Any:
    """``a * x + y`` (BLAS's axpy) from the namespace's own functions."""
    import rocm_array as xp  # at call time: this module loads while rocm_array assembles

    return xp.add(xp.multiply(a, x), y)


@cache
def _builtin_add() -> Any:
    import rocm_array_plugins.elementwise as elementwise  # the add this plugin overrides

    return next(i.func for i in elementwise.rocm_array_functions() if i.name == "add")


def add(x1: Any, x2: Any, /) -> Any:
    CALLS["add"] += 1
    return _builtin_add()(x1, x2)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return [Impl("axpy", axpy), Impl("add", add, priority=10)]
