"""Finds the plugins (entry-point group ``rocm_array.plugins``), applies the user's
allow/block lists, and assembles the function table from what they provide.

A plugin that fails to load is a warning, never a failed import; a name two
plugins claim without a deciding priority is an error at assembly.
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
from .namespace import TABLE, FunctionTable

__all__ = ["ENTRY_POINT_GROUP", "ESSENTIAL", "PluginStatus", "PluginConflictError",
           "PluginLoadWarning", "assemble", "statuses"]

ENTRY_POINT_GROUP = "rocm_array.plugins"
#: Always loaded: without creation functions and operators no other plugin is usable.
ESSENTIAL = frozenset({"elementwise"})
ALLOW_VAR = "ROCM_ARRAY_PLUGINS"
BLOCK_VAR = "ROCM_ARRAY_DISABLE_PLUGINS"


class PluginConflictError(RuntimeError):
    """Two plugins provide one name and no priority decides between them."""


class PluginLoadWarning(UserWarning):
    """A plugin failed to load; the functions it provides are unavailable."""


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


def _resolve(loaded: list[PluginStatus]) -> dict[str, Impl]:
    winners: dict[str, tuple[Impl, str]] = {}
    for st in loaded:
        for impl in st.impls:
            prev = winners.get(impl.name)
            if prev is None:
                winners[impl.name] = (impl, st.name)
                continue
            old, owner = prev
            a = -1 if old.priority is None else old.priority
            b = -1 if impl.priority is None else impl.priority
            if a == b:
                raise PluginConflictError(
                    f"plugins '{owner}' and '{st.name}' both provide '{impl.name}' with "
                    f"priority {old.priority}; give one a higher priority, or disable one "
                    f"with {BLOCK_VAR}")
            if b > a:
                winners[impl.name] = (impl, st.name)
    return {name: impl for name, (impl, _) in winners.items()}


def assemble(env: Mapping[str, str] | None = None, table: FunctionTable = TABLE) -> FunctionTable:
    """Load the plugins under ``env``'s allow/block lists and fill ``table``."""
    env = os.environ if env is None else env
    allow, block = _names(ALLOW_VAR, env), _names(BLOCK_VAR, env)
    pm = pluggy.PluginManager("rocm_array")
    pm.add_hookspecs(hookspecs)
    eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    found = [_load(ep, pm, _block_reason(ep.name, allow, block)) for ep in eps]
    _check_needs(found)
    winners = _resolve([st for st in found if st.status == "loaded"])

    table.clear()
    table.update({name: impl.func for name, impl in winners.items()})
    table.missing = {}
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
