"""The hooks a rocm_array plugin implements (pluggy project name ``rocm_array``).

A plugin is a module or object named by an entry point in the group
``rocm_array.plugins``; it implements any of these hooks with ``@hookimpl``.
Hooks run once, when ``import rocm_array`` assembles the namespace; after that a
call such as ``xp.add(a, b)`` is a plain function call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pluggy

__all__ = ["hookspec", "hookimpl", "Impl", "KernelSource", "rocm_array_functions", "rocm_array_kernels"]

hookspec = pluggy.HookspecMarker("rocm_array")
hookimpl = pluggy.HookimplMarker("rocm_array")


@dataclass(frozen=True)
class Impl:
    """One function a plugin provides.

    ``name`` is the public name: ``"add"``, a sub-namespace's ``"linalg.solve"``, or an
    Array method that plugins supply (``"Array.__getitem__"``, ``"Array.__setitem__"``,
    ``"Array._inplace"``). When two plugins provide one name, the higher ``priority``
    wins; ``None`` loses to any number; two ``None`` (or two equal) are an error.
    """

    name: str
    func: Callable[..., Any]
    priority: int | None = None


@dataclass(frozen=True)
class KernelSource:
    """A kernel source file of ``kernels/`` and the template instantiations a plugin uses.

    ``path`` is relative to the ``kernels`` folder; ``names`` are C++ name
    expressions (``"binary<add_op, float>"``) compiled together; ``options`` are
    extra compiler flags. CI compiles every one for every target architecture.
    """

    path: str
    names: tuple[str, ...]
    options: tuple[str, ...] = ()


@hookspec
def rocm_array_functions() -> Sequence[Impl]:
    """Return the functions this plugin provides to the namespace.

    Each implementation is a front (argument checks, dtype rules, output
    allocation) that dispatches to a back for the array's device kind. It must
    work on every device kind: a plugin that is off is off everywhere.
    Keep this hook cheap: import kernels and vendor libraries lazily, at first call.
    """


@hookspec
def rocm_array_kernels() -> Sequence[KernelSource]:
    """Return every kernel instantiation this plugin can launch, for ahead-of-time checks.

    The compile check (``python -m rocm_array compile-check``) compiles them all
    for each target architecture without a GPU, so a kernel that fails to build
    for any target fails CI rather than a user's first call.
    """
