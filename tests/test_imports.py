"""The import graph of the installed packages has no cycle: data flows down, never up.

Every ``import`` and ``from … import`` counts, at module level or inside a function (an
import placed in a function still ties the two modules; it only hides the tie until the
call). Imports under ``if TYPE_CHECKING:`` are left out: they are for type checkers only.
The same walk checks that no runtime module imports the Array layer.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

PACKAGES = ("rocm_array", "rocm_array_plugins", "rocm_array_kernels")


def _modules() -> dict[str, Path]:
    """Every module of the installed packages, by dotted name."""
    found = {}
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations, package
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (anywhere but under TYPE_CHECKING)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def resolve(target: str) -> None:
        # ``from a.b import c``: c may be a module of a.b, else a name in a.b.
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    resolve(alias.name)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")
                    up = up[:len(up) - child.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for alias in child.names:
                    resolve(f"{base}.{alias.name}")
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_no_import_cycles() -> None:
    graph = _graph()
    cycles = _cycles(graph)
    described = ["\n".join(f"  {m} -> {', '.join(sorted(graph[m] & set(c)))}" for m in c) for c in cycles]
    assert not cycles, "import cycles:\n" + "\n\n".join(described)


def test_the_runtime_deals_in_bytes() -> None:
    """No module of rocm_array.runtime imports the Array layer (array, memory, devices, launch)."""
    above = ("rocm_array.array", "rocm_array.memory", "rocm_array.devices", "rocm_array.launch")
    graph = _graph()
    wrong = {m: sorted(i for i in deps if i.startswith(above)) for m, deps in graph.items()
             if m.startswith("rocm_array.runtime")}
    assert not {m: d for m, d in wrong.items() if d}


@pytest.mark.parametrize("cycle", [{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}])
def test_the_walk_finds_a_cycle(cycle: dict[str, set[str]]) -> None:
    assert _cycles(cycle) == [["a", "b", "c"]]


def _private_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(module, target) where a plugin's module imports a module of another plugin: another plugin
    is reached only through its package (``own``, its declared functions), never its internals."""
    def plugin(name: str) -> str | None:
        parts = name.split(".")
        return parts[1] if parts[0] == "rocm_array_plugins" and len(parts) > 1 else None

    return {(m, d) for m, deps in graph.items() if plugin(m) for d in deps
            if plugin(d) and plugin(d) != plugin(m) and d != f"rocm_array_plugins.{plugin(d)}"}


def test_a_plugin_reaches_another_only_through_its_package() -> None:
    found = _private_imports(_graph())
    assert not found, "imports of another plugin's internals (use its own, or the core's rocm_array.views / " \
        f"rocm_array.operands / rocm_array.fusion.expressions()): {sorted(found)}"


def test_the_rule_finds_a_private_import() -> None:
    graph = {"rocm_array_plugins.nn.gpu": {"rocm_array_plugins.elementwise.layout", "rocm_array_plugins.linalg",
                                           "rocm_array_plugins.nn.common", "rocm_array.views"}}
    assert _private_imports(graph) == {("rocm_array_plugins.nn.gpu", "rocm_array_plugins.elementwise.layout")}
