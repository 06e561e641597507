"""One back per device kind behind each front."""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, Callable


class Backs(dict[str, Callable[..., Any]]):
    """device kind -> back; a kind with no back yet raises NotImplementedError naming what is missing.

    A plugin fills the ``cpu`` back where it defines the table and adds ``gpu``
    from its GPU module, so a front never branches on the device itself.
    """

    def __init__(self, what: str, **backs: Callable[..., Any]) -> None:
        super().__init__(backs)
        self.what = what

    def __missing__(self, kind: str) -> Callable[..., Any]:
        raise NotImplementedError(f"{self.what} have no implementation on {kind} devices yet")


def register_once(*modules: ModuleType) -> Callable[[], None]:
    """A function that calls each module's ``register()`` (which fills its backs tables, or registers
    what the plugin offers the core), in order, the first time it is called: a plugin's hook calls
    it, never an import."""

    @functools.cache
    def register() -> None:
        for module in modules:
            module.register()

    return register
