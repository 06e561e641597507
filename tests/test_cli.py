"""``python -m rocm_array`` (and the ``rocm-array`` script): info, plugins, compile-check."""

from __future__ import annotations

import subprocess
import sys
import types
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import rocm_array as xp
from rocm_array import devices, plugin_manager
from rocm_array.__main__ import main


def test_info_lists_devices_plugins_and_checks_a_computation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"rocm_array {xp.__version__} (Array API 2025.12)")
    for dev in devices.available():
        assert f"\n  {dev} " in out
    for problem in devices.gpu_problems():
        assert f"(unavailable: {problem})" in out
    assert f"default device: {devices.default()}\n" in out
    for st in plugin_manager.statuses():
        assert f"\n  {st.name} " in out
    assert f"check on {devices.default()}: a * a + a, float32 (3, 4): OK" in out


def test_info_into_a_closed_pipe_is_quiet() -> None:
    # `python -m rocm_array info | head -1`: the reader is gone before the output; no traceback, exit 0.
    proc = subprocess.Popen([sys.executable, "-m", "rocm_array", "info"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert b"BrokenPipeError" not in err


def test_info_describes_a_gpu(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    props = types.SimpleNamespace(platform="amd", name="AMD Instinct MI210", arch="gfx90a", wave_size=64,
                                  compute_units=104, total_memory=64 * 2**30)
    gpu = devices.Device("gpu", 0, types.SimpleNamespace(properties=props))  # type: ignore[arg-type]
    monkeypatch.setattr(devices, "available", lambda: (devices.cpu, gpu))
    monkeypatch.setattr(devices, "_default", devices.cpu)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert ("\n  gpu:0    platform amd, AMD Instinct MI210, gfx90a, wave size 64, 104 compute units, "
            "64.0 GiB\n") in out
    for library in ("hipBLAS and hipSOLVER", "hipFFT", "MIOpen"):  # each with why and the fix
        assert f"{library}: MISSING: " in out


@pytest.mark.parametrize("wrong, shown", [(lambda a, b: a, "MISMATCH"),
                                          (lambda a, b: 1 / 0, "FAILED: ZeroDivisionError")])
def test_info_fails_when_the_check_fails(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                         wrong: object, shown: str) -> None:
    monkeypatch.setattr(xp, "add", wrong)
    assert main(["info"]) == 1
    assert shown in capsys.readouterr().out


def test_info_fails_on_a_missing_default_device(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(devices, "_default", None)
    monkeypatch.setenv("ROCM_ARRAY_DEVICE", "gpu:99")
    assert main(["info"]) == 1
    assert "default device: no device 'gpu:99'" in capsys.readouterr().out


def test_plugins_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["plugin", "distribution", "version", "status"]
    for st in plugin_manager.statuses():
        assert [st.name, st.distribution, st.version, st.status] == next(
            r.split()[:4] for r in lines[1:] if r.startswith(st.name + " "))
        public = [n for n in st.functions if not n.startswith("Array.")]  # internal names stay out
        internal = len(st.functions) - len(public)
        head = f"\n{st.name} provides {len(public)} functions" + (
            f" and {internal} Array methods and protocols" if internal else "") + ":\n"
        listed = out.split(head)[1].split("\n\n")[0].split("\n  overrides:")[0]
        assert " ".join(listed.split()) == (", ".join(public) or "-")


def test_compile_check_is_dispatched_with_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        seen.append(argv)
        return 3

    fake = types.ModuleType("rocm_array.compile_check")
    fake.main = fake_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rocm_array.compile_check", fake)
    assert main(["compile-check", "--arch", "gfx90a", "--help"]) == 3
    assert seen == [["--arch", "gfx90a", "--help"]]


def test_bad_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["frobnicate"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    assert "usage: rocm-array" in capsys.readouterr().err


def test_console_script_and_module_entry(tmp_path: Path) -> None:
    (script,) = entry_points(group="console_scripts", name="rocm-array")
    assert script.load() is main
    proc = subprocess.run([sys.executable, "-m", "rocm_array", "info"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ": OK\n" in proc.stdout
