"""The assembled function table that Arrays and the shim call through.

Filled once, at import, by ``assembly.assemble``. Keys are the public names
(``"add"``, ``"linalg.solve"``, ``"nn.conv2d"``) and the Array methods plugins
provide (``"Array.__getitem__"``, ``"Array.__setitem__"``, ``"Array._inplace"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .plugin_manager import PluginStatus


class PluginUnavailableError(AttributeError):
    """A function whose plugin is blocked, failed to load, or is not installed."""


class PluginConflictError(PluginUnavailableError):
    """Two plugins provide one name and no priority decides between them: the name is left out."""


class FunctionTable(dict[str, Callable[..., Any]]):
    """name -> implementation; a missing name raises an error that says which plugin has it."""

    #: Why a name is missing when no plugin is known to provide it.
    NO_PROVIDER = "no installed plugin provides it"

    def __init__(self) -> None:
        super().__init__()
        self.missing: dict[str, str] = {}  # name -> why it is unavailable
        self.conflicts: dict[str, str] = {}  # name -> the plugins that both provide it, and the fix
        self.default_reason = self.NO_PROVIDER
        self.plugins: list[PluginStatus] = []  # what the assembly that filled this table found

    def __missing__(self, name: str) -> Callable[..., Any]:
        if name in self.conflicts:
            raise PluginConflictError(f"rocm_array.{name} is unavailable: {self.conflicts[name]}")
        why = self.missing.get(name, self.default_reason)
        raise PluginUnavailableError(f"rocm_array.{name} is unavailable: {why}")


TABLE = FunctionTable()


def by_name(name: str) -> Callable[..., Any]:
    """The namespace's function ``name``: how a table row pickles (by name, as functions do; its
    caches hold this process's runtimes and kernels). Unpickling imports this module, and so the
    package first, which assembles TABLE."""
    return TABLE[name]
