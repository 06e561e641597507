"""The plugin system: allow/block lists, errors for functions whose plugin is off,
broken plugins, conflicts and priority, and a third-party plugin installed with pip.

Assembly tests fill a private ``FunctionTable`` (the running namespace is left
alone); what needs a fresh ``import rocm_array`` runs in a subprocess. Fake
plugins are distributions written into a temporary folder on ``sys.path``: a
``*.dist-info`` with an entry point, and the module it names.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import textwrap
import uuid
import venv
from pathlib import Path
from typing import Callable

import pytest

from rocm_array import plugin_manager
from rocm_array.namespace import FunctionTable, PluginUnavailableError
from rocm_array.plugin_manager import (ALLOW_VAR, BLOCK_VAR, PluginConflictError, PluginConflictWarning,
                                       PluginListWarning, PluginLoadWarning, PluginStatus)

ROOT = Path(__file__).resolve().parents[1]
CORE = ("elementwise", "reduction", "linalg", "fft")
OPTIONAL = CORE[1:]  # all but the essential one


def assemble(env: dict[str, str]) -> FunctionTable:
    return plugin_manager.assemble(env=env, table=FunctionTable())


def plugins_of(table: FunctionTable) -> dict[str, PluginStatus]:
    return {st.name: st for st in table.plugins}


def run(argv: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command in ``cwd``, away from the source tree (so the installed package is
    the one imported), without the caller's plugin settings."""
    full = {k: v for k, v in os.environ.items() if k not in (ALLOW_VAR, BLOCK_VAR)}
    full.update(env or {})
    return subprocess.run(argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=300)


def run_python(code: str, cwd: Path, env: dict[str, str] | None = None,
               python: str | Path = sys.executable) -> subprocess.CompletedProcess[str]:
    return run([python, "-c", textwrap.dedent(code)], cwd, env)


def check(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


FakePlugins = Callable[..., Path]


@pytest.fixture
def fake_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePlugins:
    """``fake_plugins(name=source, ...)`` installs one distribution with those plugins
    (each a module of the given source) and returns the folder that holds it."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def install(**plugins: str) -> Path:
        dist = f"fake_{uuid.uuid4().hex[:8]}"
        info = folder / f"{dist}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        lines = ["[rocm_array.plugins]"]
        for name, source in plugins.items():
            module = f"{dist}_{name}"
            (folder / f"{module}.py").write_text(textwrap.dedent(source))
            lines.append(f"{name} = {module}")
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        return folder

    return install


def provides(*entries: str) -> str:
    """A plugin module providing ``entries`` ("name" or "name:priority"), each returning its name."""
    impls = []
    for entry in entries:
        name, _, priority = entry.partition(":")
        impls.append(f"Impl({name!r}, lambda *a, **k: {name!r}, {priority or None})")
    return ("from rocm_array.hookspecs import Impl, hookimpl\n\n@hookimpl\n"
            f"def rocm_array_functions():\n    return [{', '.join(impls)}]\n")


# -- allow and block lists ------------------------------------------------------------------

def test_default_loads_every_core_plugin() -> None:
    table = assemble({})
    found = plugins_of(table)
    for name in CORE:
        assert found[name].status == "loaded", found[name]
        assert found[name].distribution == "rocm_array"
        assert set(found[name].functions) <= set(table)
    assert not table.missing
    assert table.default_reason == FunctionTable.NO_PROVIDER


def test_empty_allow_list_keeps_only_the_essential_plugin() -> None:
    table = assemble({ALLOW_VAR: ""})
    found = plugins_of(table)
    assert found["elementwise"].status == "loaded"
    assert set(table) == set(found["elementwise"].functions)
    for name in OPTIONAL:
        assert found[name].status == "blocked"
        assert ALLOW_VAR in found[name].reason and f"add '{name}'" in found[name].reason


def test_allow_list_names_the_plugins_to_load() -> None:
    found = plugins_of(assemble({ALLOW_VAR: "linalg, fft"}))
    assert [found[n].status for n in CORE] == ["loaded", "blocked", "loaded", "loaded"]


def test_block_list_removes_plugins_everywhere() -> None:
    table = assemble({BLOCK_VAR: " linalg,fft "})
    found = plugins_of(table)
    assert found["reduction"].status == found["elementwise"].status == "loaded"
    for name in ("linalg", "fft"):
        st = found[name]
        assert st.status == "blocked" and BLOCK_VAR in st.reason and f"remove '{name}'" in st.reason
        assert st.functions, f"a blocked plugin still says what it would provide: {st}"
        for func in st.functions:
            assert func not in table
            assert f"'{name}' plugin" in table.missing[func]


def test_essential_plugin_cannot_be_blocked() -> None:
    with pytest.warns(PluginLoadWarning, match="'elementwise' is essential"):
        table = assemble({BLOCK_VAR: "elementwise"})
    assert plugins_of(table)["elementwise"].status == "loaded"
    assert "add" in table


@pytest.mark.parametrize("env, how", [({BLOCK_VAR: "reduction,linalg"}, "remove 'reduction' from it"),
                                      ({ALLOW_VAR: "fft"}, "add 'reduction' to it")])
def test_blocked_function_error_names_plugin_and_remedy(env: dict[str, str], how: str) -> None:
    table = assemble(env)
    with pytest.raises(PluginUnavailableError, match=r"rocm_array\.sum is unavailable: provided by "
                                                     r"the 'reduction' plugin.*" + how):
        table["sum"]
    with pytest.raises(PluginUnavailableError, match=r"rocm_array\.linalg\.solve .*'linalg' plugin"):
        table["linalg.solve"]


def test_namespace_without_blocked_plugins(tmp_path: Path) -> None:
    check(run_python("""
        import numpy as np
        import rocm_array as xp
        from rocm_array import PluginUnavailableError

        for name, plugin in [("sum", "reduction"), ("linalg", "linalg"), ("fft", "fft")]:
            assert not hasattr(xp, name), name
            try:
                getattr(xp, name)
            except PluginUnavailableError as exc:
                assert f"'{plugin}' plugin" in str(exc), exc
                assert "ROCM_ARRAY_DISABLE_PLUGINS" in str(exc), exc
        try:
            xp.linalg.solve
        except PluginUnavailableError as exc:
            assert "the rocm_array.linalg extension is unavailable" in str(exc), exc
            assert "'linalg' plugin" in str(exc), exc
        else:
            raise AssertionError("xp.linalg.solve is there with linalg blocked")
        x = xp.asarray(np.arange(3))
        assert np.asarray(xp.add(x, x).to_device("cpu")).tolist() == [0, 2, 4]
        """, tmp_path, {BLOCK_VAR: "reduction,linalg,fft"}))


def test_extensions_are_sub_namespaces_when_loaded(tmp_path: Path) -> None:
    check(run_python("""
        import sys
        import rocm_array as xp

        for ext in ("linalg", "fft"):
            mod = getattr(xp, ext)
            assert sys.modules[f"rocm_array.{ext}"] is mod
        assert callable(xp.linalg.solve) and callable(xp.fft.fft)
        """, tmp_path))


# -- broken plugins ---------------------------------------------------------------------------

@pytest.mark.parametrize("source, cause", [
    ("raise RuntimeError('kaboom at import')", "RuntimeError: kaboom at import"),
    ("from rocm_array.hookspecs import hookimpl\n@hookimpl\n"
     "def rocm_array_functions():\n    raise ValueError('kaboom in the hook')",
     "ValueError: kaboom in the hook"),
    ("from rocm_array.hookspecs import hookimpl\n@hookimpl\n"
     "def rocm_array_functions():\n    return ['not an Impl']", "TypeError: rocm_array_functions returned"),
])
def test_plugin_failing_to_load_is_a_warning(fake_plugins: FakePlugins, source: str, cause: str) -> None:
    fake_plugins(broken=source)
    with pytest.warns(PluginLoadWarning, match=rf"plugin 'broken' failed to load \({cause}"):
        table = assemble({})
    st = plugins_of(table)["broken"]
    assert st.status == "failed" and cause in st.reason
    assert all(plugins_of(table)[n].status == "loaded" for n in CORE)
    with pytest.raises(PluginUnavailableError, match=r"failed to load: 'broken' \(" + cause):
        table["no_such_function"]
    assert assemble({BLOCK_VAR: "broken"}).default_reason == FunctionTable.NO_PROVIDER


def test_import_survives_a_broken_plugin(fake_plugins: FakePlugins, tmp_path: Path) -> None:
    folder = fake_plugins(broken="raise RuntimeError('kaboom at import')")
    out = run_python("""
        import numpy as np
        import rocm_array as xp

        x = xp.asarray(np.arange(3))
        print(np.asarray(xp.add(x, x).to_device("cpu")).tolist())
        """, tmp_path, {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])})
    assert check(out).strip() == "[0, 2, 4]"
    assert "PluginLoadWarning: rocm_array plugin 'broken' failed to load " \
           "(RuntimeError: kaboom at import)" in out.stderr


@pytest.mark.parametrize("first", ["rocm_array_plugins.reduction.gpu", "rocm_array_plugins.linalg.small_gemm"])
def test_a_plugin_module_imported_first_leaves_the_namespace_whole(first: str, tmp_path: Path) -> None:
    """Importing a plugin's module before rocm_array imports rocm_array from inside that plugin's
    half-initialised package; the namespace is assembled at its first use, with every plugin."""
    out = run_python(f"""
        import warnings
        warnings.simplefilter("error")
        import {first}
        import rocm_array as xp

        print(float(xp.sum(xp.ones(3))), xp.linalg.det.__name__)
        """, tmp_path)
    assert check(out).split()[:2] == ["3.0", "det"]


def test_blocking_a_broken_plugin_silences_it(fake_plugins: FakePlugins, recwarn: pytest.WarningsRecorder) -> None:
    fake_plugins(broken="raise RuntimeError('kaboom at import')")
    assert plugins_of(assemble({BLOCK_VAR: "broken"}))["broken"].status == "blocked"
    assert not [w for w in recwarn if issubclass(w.category, PluginLoadWarning)]


# -- conflicts and priority -------------------------------------------------------------------

@pytest.mark.parametrize("first, second", [("fake_fn", "fake_fn"), ("fake_fn:3", "fake_fn:3")])
def test_two_plugins_one_name_is_an_error(fake_plugins: FakePlugins, first: str, second: str) -> None:
    fake_plugins(one=provides(first), two=provides(second, "other_fn"))
    with pytest.warns(PluginConflictWarning, match="plugins 'one' and 'two' both provide 'fake_fn'"):
        table = assemble({})
    with pytest.raises(PluginConflictError, match="plugins 'one' and 'two' both provide 'fake_fn'.*priority"):
        table["fake_fn"]
    assert table["other_fn"]() == "other_fn" and table["add"] is not None  # the rest still works
    assert assemble({BLOCK_VAR: "two"})["fake_fn"]() == "fake_fn"


def test_overriding_a_core_function_needs_a_priority(fake_plugins: FakePlugins) -> None:
    fake_plugins(mine=provides("add"))
    with pytest.warns(PluginConflictWarning, match="'elementwise' and 'mine' both provide 'add'"):
        table = assemble({})
    with pytest.raises(PluginConflictError):
        table["add"]
    assert plugins_of(table)["mine"].overrides == {}


def test_unknown_names_in_the_lists_are_warned_about() -> None:
    with pytest.warns(PluginListWarning, match="ROCM_ARRAY_PLUGINS names 'linalgg'.*the plugins are elementwise"):
        table = assemble({ALLOW_VAR: "linalgg"})
    assert plugins_of(table)["linalg"].status == "blocked"
    with pytest.warns(PluginListWarning, match="ROCM_ARRAY_DISABLE_PLUGINS names 'ftt'"):
        assemble({BLOCK_VAR: "ftt"})


def test_the_plugins_command_reports_a_conflict(fake_plugins: FakePlugins, tmp_path: Path) -> None:
    site = fake_plugins(mine=provides("add", "sub:3"), yours=provides("sub:1"))
    proc = run([sys.executable, "-m", "rocm_array", "plugins"], tmp_path,
               {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])})
    out = check(proc)
    assert "conflict: plugins 'elementwise' and 'mine' both provide 'add'" in out
    assert "overrides: sub (of yours)" in out
    assert "Array." not in out.split("numpy_dispatch provides")[1].split("\n")[1]  # internal names stay out


def test_higher_priority_wins_in_any_order(fake_plugins: FakePlugins) -> None:
    # Entry points load in name order: 'a_high' before 'b_low', 'c_top' last.
    fake_plugins(a_high=provides("add:5", "fake_fn:2"), b_low=provides("add:1", "fake_fn"),
                 c_top=provides("fake_fn:7"))
    table = assemble({})
    assert table["add"]() == "add" and table["add"].__module__.endswith("_a_high")
    assert table["fake_fn"].__module__.endswith("_c_top")
    assert "add" in plugins_of(table)["b_low"].functions  # it still lists what it provides
    assert assemble({BLOCK_VAR: "a_high"})["add"].__module__.endswith("_b_low")


# -- a third-party distribution, installed with pip -------------------------------------------

def _venv_python(env_dir: Path) -> Path:
    return env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def test_third_party_plugin_installed_with_pip(tmp_path: Path) -> None:
    """pip installs the project and tests/thirdparty_plugin (offline, no build isolation)
    into a new environment, where the plugin adds ``axpy`` and overrides ``add``."""
    env_dir = tmp_path / "env"
    venv.create(env_dir, system_site_packages=True)
    python = _venv_python(env_dir)
    # The running interpreter's packages (numpy, pluggy, setuptools...) stay visible in
    # the new environment even when it is itself a virtual environment; its pip installs there.
    new_site = check(run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])",
                                tmp_path, python=python)).strip()
    (Path(new_site) / "_outer_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    junk = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis",
                                  ".pytest_cache", ".venv", ".whl", ".out")
    project = shutil.copytree(ROOT, tmp_path / "project", ignore=junk)
    for source in (project, project / "tests" / "thirdparty_plugin"):
        check(run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
                   "--no-build-isolation", "--no-index", source], tmp_path))

    check(run_python(f"""
        import numpy as np
        import rocm_array as xp
        import rocm_array_axpy as plugin

        assert xp.__file__.startswith({str(env_dir)!r}), xp.__file__
        assert xp.add is plugin.add
        a = xp.asarray(np.full(4, 2, dtype=np.float32))
        x = xp.asarray(np.arange(4, dtype=np.float32))
        y = xp.asarray(np.ones(4, dtype=np.float32))
        assert np.asarray(xp.axpy(a, x, y).to_device("cpu")).tolist() == [1.0, 3.0, 5.0, 7.0]
        assert plugin.CALLS["add"] == 1
        """, tmp_path, python=python))

    listing = check(run([python, "-m", "rocm_array", "plugins"], tmp_path))
    row = next(line.split() for line in listing.splitlines() if line.startswith("axpy "))
    assert row == ["axpy", "rocm-array-axpy", "1.2.3", "loaded"]
    assert "axpy provides 2 functions:\n  add, axpy\n" in listing
    blocked = check(run([python, "-m", "rocm_array", "plugins"], tmp_path, {BLOCK_VAR: "axpy"}))
    assert "blocked (blocked by ROCM_ARRAY_DISABLE_PLUGINS; remove 'axpy' from it to enable)" in blocked


def test_the_errors_and_warnings_users_catch_are_in_the_namespace() -> None:
    import rocm_array as xp
    from rocm_array.axes import AxisError
    from rocm_array.runtime.vendor import VendorFallbackWarning

    assert xp.AxisError is AxisError and issubclass(xp.AxisError, (IndexError, ValueError))
    assert xp.VendorFallbackWarning is VendorFallbackWarning
    assert issubclass(xp.PluginConflictError, xp.PluginUnavailableError)
    for name in ("PluginLoadWarning", "PluginConflictWarning", "PluginListWarning", "FusionFallbackWarning"):
        assert issubclass(getattr(xp, name), UserWarning), name


@pytest.mark.parametrize("name, hint", [("float", "did you mean float64? (float is NumPy's name; the standard's is float64)"),
                                        ("concatenate", "did you mean concat?"), ("ad", "did you mean add?"),
                                        ("linalg.solv", "did you mean linalg.solve?")])
def test_a_name_no_plugin_provides_says_what_was_likely_meant(name: str, hint: str) -> None:
    """A NumPy name or a misspelling is not sent looking for a missing plugin."""
    import rocm_array as xp

    where = xp
    *parents, leaf = name.split(".")
    for p in parents:
        where = getattr(where, p)
    with pytest.raises(xp.PluginUnavailableError, match=re.escape(f"rocm_array has no {name}: {hint}")):
        getattr(where, leaf)
    assert not hasattr(xp, "float")
