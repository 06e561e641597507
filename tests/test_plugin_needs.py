"""Explicit backs and declared needs.

Every plugin keeps its backs tables in its ``backs`` module, filled by its registration; a
plugin that calls another's functions declares it (``rocm_array_needs``) and reaches it
through that plugin's ``own``, never through the namespace table that users and
third-party plugins can change.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from helpers import host
from test_plugins import BLOCK_VAR, FakePlugins, assemble, fake_plugins, plugins_of  # noqa: F401 - a fixture

import rocm_array as xp
from rocm_array.backs import Backs
from rocm_array.namespace import TABLE
from rocm_array.plugin_manager import PluginLoadWarning

PLUGINS = ("elementwise", "reduction", "linalg", "fft", "nn")


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_table_has_a_cpu_and_a_gpu_back(plugin: str) -> None:
    backs = importlib.import_module(f"rocm_array_plugins.{plugin}.backs")
    tables = [v for v in vars(backs).values() if isinstance(v, Backs)]
    assert tables and sorted(map(id, tables)) == sorted(map(id, backs.TABLES))  # TABLES lists them all
    for table in tables:
        assert {"cpu", "gpu"} <= set(table), f"{plugin}: {table.what} has backs for {sorted(table)}"


def test_needs_are_declared() -> None:
    needs = {st.name: st.needs for st in TABLE.plugins}
    assert needs["nn"] == ["elementwise", "linalg"] and needs["linalg"] == ["elementwise", "reduction"]
    assert needs["elementwise"] == []


def test_a_turned_off_need_still_serves_its_dependents(device: str) -> None:
    table = assemble({BLOCK_VAR: "linalg"})
    status = plugins_of(table)
    assert (status["linalg"].status, status["nn"].status) == ("blocked", "loaded")
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5) / 10
    w = np.linspace(-1, 1, 4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3)
    got = table["nn.conv2d"](xp.asarray(x, device=device), xp.asarray(w, device=device), padding=1)
    want = xp.nn.conv2d(xp.asarray(x, device="cpu"), xp.asarray(w, device="cpu"), padding=1)
    np.testing.assert_allclose(host(got), host(want), rtol=1e-5, atol=1e-5)


def test_an_override_in_the_namespace_does_not_change_the_plugins_own_work(
        device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A third-party ``sum`` (or ``multiply``) of higher priority is what users call; linalg's
    trace, norms and cross products keep computing with the plugins' own functions."""
    a = np.arange(1.0, 10.0).reshape(3, 3)
    x = xp.asarray(a, device=device)
    for name in ("sum", "max", "multiply", "subtract", "stack", "matmul"):
        monkeypatch.setitem(TABLE, name, lambda *args, **kwargs: pytest.fail("the namespace table was called"))
    assert float(xp.linalg.trace(x)) == 15.0
    np.testing.assert_allclose(float(xp.linalg.matrix_norm(x, ord=2)), np.linalg.norm(a, 2))
    np.testing.assert_allclose(host(xp.linalg.cross(x, x)), np.zeros((3, 3)))


def test_a_plugin_whose_need_is_missing_is_off_with_a_warning(fake_plugins: FakePlugins) -> None:  # noqa: F811
    fake_plugins(needy="from rocm_array.hookspecs import Impl, hookimpl\n\n"
                       "@hookimpl\ndef rocm_array_functions():\n    return [Impl('needy_fn', len)]\n\n"
                       "@hookimpl\ndef rocm_array_needs():\n    return ['no_such_plugin']\n")
    with pytest.warns(PluginLoadWarning, match=r"'needy' is off: it needs the plugin\(s\) no_such_plugin"):
        table = assemble({})
    assert plugins_of(table)["needy"].status == "failed"
    assert "needy_fn" not in table
