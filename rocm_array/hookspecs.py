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

__all__ = ["hookspec", "hookimpl", "Impl", "KernelSource", "Own", "rocm_array_functions", "rocm_array_kernels",
           "rocm_array_needs"]

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
    """A kernel source file of ``rocm_array_kernels/`` and the template instantiations a plugin uses.

    ``path`` is relative to the ``kernels`` folder; ``names`` are C++ name
    expressions (``"binary<add_op, float>"``) compiled together; ``options`` are
    extra compiler flags; ``source``, when set, is the text of a program generated at
    run time (a fused expression's), which ``path`` names. CI compiles every one for
    every target architecture; ``kinds``, when set, narrows that to the kinds of GPU
    (``runtime.targets.KINDS``) these options are for. ``threads`` and ``shared``, when set,
    give for each name the most threads and dynamic shared memory (bytes) a block of it is
    launched with: the resource report computes each kernel's occupancy from them (an entry
    without them is reported at the largest block its code allows).
    """

    path: str
    names: tuple[str, ...]
    options: tuple[str, ...] = ()
    source: str | None = None
    kinds: tuple[str, ...] = ()
    threads: tuple[int, ...] = ()
    shared: tuple[int, ...] = ()


class Own:
    """A plugin's own implementations by public name, for the plugins that need it.

    A plugin that uses another's functions calls them through this, never through the
    namespace table: a third-party plugin that overrides a name in the namespace then
    changes what users call, not what rocm_array's own functions compute (``linalg.trace``
    sums the same way on every device whatever ``xp.sum`` is), and a plugin the user turned
    off still serves the plugins that need it. A provider sets ``own = Own(impls)``, with
    ``impls`` its ``rocm_array_functions`` (and any it computes for dependents only, which they
    publish); a dependent calls ``own("multiply")(a, b)``.
    """

    def __init__(self, impls: Callable[[], Sequence[Impl]]) -> None:
        self._impls = impls
        self._table: dict[str, Callable[..., Any]] | None = None

    def __call__(self, name: str) -> Callable[..., Any]:
        if self._table is None:
            self._table = {impl.name: impl.func for impl in self._impls()}
        return self._table[name]


@hookspec
def rocm_array_functions() -> Sequence[Impl]:
    """Return the functions this plugin provides to the namespace.

    Each implementation is a front (argument checks, dtype rules, output
    allocation) that dispatches to a back for the array's device kind. It must
    work on every device kind: a plugin that is off is off everywhere.
    Keep this hook cheap: import kernels and vendor libraries lazily, at first call.
    """
    return ()


@hookspec
def rocm_array_kernels() -> Sequence[KernelSource]:
    """Return every kernel instantiation this plugin can launch, for ahead-of-time checks.

    The compile check (``python -m rocm_array compile-check``) compiles them all
    for each target architecture without a GPU, so a kernel that fails to build
    for any target fails CI rather than a user's first call.
    """
    return ()


@hookspec
def rocm_array_needs() -> Sequence[str]:
    """Return the names of the plugins whose functions this plugin calls (through their ``Own``).

    Assembly checks them: a plugin whose need is not installed, or failed to load, fails to
    load itself, with a ``PluginLoadWarning`` naming the missing plugin. A need the user
    turned off with ``ROCM_ARRAY_PLUGINS`` or ``ROCM_ARRAY_DISABLE_PLUGINS`` still serves
    its dependents: its names leave the namespace, its code stays installed.
    """
    return ()
