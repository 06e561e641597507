"""Finds the plugins (entry-point group ``rocm_array.plugins``), applies the user's
allow/block lists, and assembles the function table from what they provide.

A plugin that fails to load is a warning, never a failed import. A name two plugins claim without
a deciding priority is left out of the namespace: a ``PluginConflictWarning`` at assembly, and a
``PluginConflictError`` naming both plugins where it is used. The rest of the namespace, and
``python -m rocm_array plugins`` that diagnoses it, keep working.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Mapping

import pluggy

from . import hookspecs
from .hookspecs import Impl
from .namespace import TABLE, FunctionTable, PluginConflictError

__all__ = ["ENTRY_POINT_GROUP", "ESSENTIAL", "PluginStatus", "PluginConflictError", "PluginConflictWarning",
           "PluginLoadWarning", "PluginListWarning", "assemble", "statuses"]

ENTRY_POINT_GROUP = "rocm_array.plugins"
#: Always loaded: without creation functions and operators no other plugin is usable.
ESSENTIAL = frozenset({"elementwise"})
ALLOW_VAR = "ROCM_ARRAY_PLUGINS"
BLOCK_VAR = "ROCM_ARRAY_DISABLE_PLUGINS"


class PluginLoadWarning(UserWarning):
    """A plugin failed to load; the functions it provides are unavailable."""


class PluginConflictWarning(UserWarning):
    """Two plugins provide one name and no priority decides: the name is left out of the namespace."""


class PluginListWarning(UserWarning):
    """ROCM_ARRAY_PLUGINS or ROCM_ARRAY_DISABLE_PLUGINS names a plugin that is not installed."""


@dataclass
class PluginStatus:
    """What ``python -m rocm_array plugins`` reports for one plugin."""

    name: str
    distribution: str
    version: str
    status: str  # "loaded", "blocked" or "failed"
    reason: str = ""
    functions: list[str] = field(default_factory=list)
    impls: list[Impl] = field(default_factory=list, repr=False)
    needs: list[str] = field(default_factory=list)
    overrides: dict[str, str] = field(default_factory=dict)  # name -> the plugin whose function it replaces


def statuses() -> list[PluginStatus]:
    """Every plugin found by the assembly of the namespace, in load order."""
    return list(TABLE.plugins)


def _names(var: str, env: Mapping[str, str]) -> set[str] | None:
    raw = env.get(var)
    if raw is None:
        return None
    return {n.strip() for n in raw.split(",") if n.strip()}


def _block_reason(name: str, allow: set[str] | None, block: set[str] | None) -> str:
    if name in ESSENTIAL:
        if block and name in block:
            warnings.warn(f"plugin '{name}' is essential and cannot be disabled; "
                          f"ignoring it in {BLOCK_VAR}", PluginLoadWarning, stacklevel=4)
        return ""
    if block is not None and name in block:
        return f"blocked by {BLOCK_VAR}; remove '{name}' from it to enable"
    if allow is not None and name not in allow:
        return f"not in {ALLOW_VAR}; add '{name}' to it (or unset it) to enable"
    return ""


def _provided(obj: Any) -> list[Impl]:
    if not hasattr(obj, "rocm_array_functions"):  # a plugin may provide only kernels
        return []
    impls = list(obj.rocm_array_functions())
    for impl in impls:
        if not isinstance(impl, Impl):
            raise TypeError(f"rocm_array_functions returned {impl!r}, not a rocm_array.hookspecs.Impl")
    return impls


def _load(ep: EntryPoint, pm: pluggy.PluginManager, reason: str) -> PluginStatus:
    dist = getattr(ep, "dist", None)
    st = PluginStatus(ep.name, dist.name if dist else "?", dist.version if dist else "?",
                      "blocked" if reason else "loaded", reason)
    # A blocked plugin is still read (not installed): what it would provide names it in errors.
    try:
        obj = ep.load()
        if reason:
            pm.set_blocked(ep.name)
        else:
            pm.register(obj, name=ep.name)  # checks its hook implementations against the specs
        impls = _provided(obj)
        st.needs = list(obj.rocm_array_needs()) if hasattr(obj, "rocm_array_needs") else []
    except Exception as exc:  # a broken plugin must not break ``import rocm_array``
        if not reason:
            st.status, st.reason = "failed", f"{type(exc).__name__}: {exc}"
            warnings.warn(f"rocm_array plugin '{ep.name}' failed to load ({st.reason}); "
                          "its functions are unavailable", PluginLoadWarning, stacklevel=3)
        return st
    st.functions = sorted(i.name for i in impls)
    if not reason:
        st.impls = impls
    return st


def _check_needs(found: list[PluginStatus]) -> None:
    """Fail every loaded plugin that needs one not installed or failed (and, in turn, its dependents)."""
    changed = True
    while changed:
        changed = False
        usable = {st.name for st in found if st.status != "failed"}
        for st in found:
            missing = [n for n in st.needs if n not in usable]
            if st.status == "loaded" and missing:
                st.status, st.impls, changed = "failed", [], True
                st.reason = (f"it needs the plugin(s) {', '.join(missing)}, not installed or failed to load; "
                             "install or repair them")
                warnings.warn(f"rocm_array plugin '{st.name}' is off: {st.reason}", PluginLoadWarning, stacklevel=3)


def _resolve(loaded: list[PluginStatus]) -> tuple[dict[str, Impl], dict[str, str]]:
    """The winning implementation of each name, and the names no priority decides (-> why)."""
    winners: dict[str, tuple[Impl, PluginStatus]] = {}
    conflicts: dict[str, str] = {}
    for st in loaded:
        for impl in st.impls:
            prev = winners.get(impl.name)
            if prev is None:
                winners[impl.name] = (impl, st)
                continue
            old, owner = prev
            a = -1 if old.priority is None else old.priority
            b = -1 if impl.priority is None else impl.priority
            if a == b:
                conflicts.setdefault(impl.name, (
                    f"plugins '{owner.name}' and '{st.name}' both provide '{impl.name}' with "
                    f"priority {old.priority}; give one a higher priority, or disable one with {BLOCK_VAR}"))
            elif b > a:
                winners[impl.name] = (impl, st)
    for name in conflicts:
        winners.pop(name, None)
    for name, (_, st) in winners.items():
        losers = [other.name for other in loaded if other is not st and any(i.name == name for i in other.impls)]
        if losers:
            st.overrides[name] = ", ".join(losers)
    return {name: impl for name, (impl, _) in winners.items()}, conflicts


def _check_lists(found: list[PluginStatus], allow: set[str] | None, block: set[str] | None) -> None:
    """A PluginListWarning for each name in the allow or block list that no plugin has."""
    known = {st.name for st in found}
    for var, names in ((ALLOW_VAR, allow), (BLOCK_VAR, block)):
        for name in sorted((names or set()) - known):
            warnings.warn(f"{var} names '{name}', which is not an installed plugin; the plugins are "
                          f"{', '.join(sorted(known))}", PluginListWarning, stacklevel=4)


def assemble(env: Mapping[str, str] | None = None, table: FunctionTable = TABLE) -> FunctionTable:
    """Load the plugins under ``env``'s allow/block lists and fill ``table``."""
    env = os.environ if env is None else env
    allow, block = _names(ALLOW_VAR, env), _names(BLOCK_VAR, env)
    pm = pluggy.PluginManager("rocm_array")
    pm.add_hookspecs(hookspecs)
    eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    found = [_load(ep, pm, _block_reason(ep.name, allow, block)) for ep in eps]
    _check_lists(found, allow, block)
    _check_needs(found)
    winners, conflicts = _resolve([st for st in found if st.status == "loaded"])
    for why in conflicts.values():
        warnings.warn(f"{why}; the name is left out of the namespace", PluginConflictWarning, stacklevel=3)

    table.clear()
    table.update({name: impl.func for name, impl in winners.items()})
    table.missing = {}
    table.conflicts = conflicts
    for st in found:
        if st.status != "loaded":
            for name in st.functions:
                table.missing.setdefault(name, f"provided by the '{st.name}' plugin, which is {st.reason}")
    failed = [f"'{st.name}' ({st.reason})" for st in found if st.status == "failed"]
    table.default_reason = (
        "no loaded plugin provides it; plugins that failed to load: " + ", ".join(failed)
        if failed else FunctionTable.NO_PROVIDER)
    table.plugins = found
    return table


def plugin_manager_hooks() -> pluggy.PluginManager:
    """A PluginManager with the loaded plugins registered, to call hooks such as rocm_array_kernels."""
    pm = pluggy.PluginManager("rocm_array")
    pm.add_hookspecs(hookspecs)
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if any(st.name == ep.name and st.status == "loaded" for st in TABLE.plugins):
            pm.register(ep.load(), name=ep.name)
    return pm
