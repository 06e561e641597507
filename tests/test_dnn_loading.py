"""Which cuDNN the nvidia platform opens (dnn_nvidia._import_frontend), over a recording ctypes: one
copy in the process, the one PyTorch would use (a system copy loaded first made PyTorch refuse cuDNN)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest
from helpers import run_python

from rocm_array.runtime import dnn_nvidia


class Loader:
    """ctypes.CDLL's stand-in: records each open; ``opened`` says what RTLD_NOLOAD finds."""

    def __init__(self, opened: bool, system: bool = True) -> None:
        self.opened, self.system, self.calls = opened, system, []

    def __call__(self, name: str, mode: int = 0) -> object:
        self.calls.append(name)
        if mode & os.RTLD_NOLOAD and not self.opened:
            raise OSError(f"{name}: not loaded")
        if not mode & os.RTLD_NOLOAD and "/" not in name and not self.system:
            raise OSError(f"{name}: cannot open shared object file")
        self.opened = True
        return object()


@pytest.fixture
def frontend(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("cudnn")
    monkeypatch.setitem(sys.modules, "cudnn", module)
    return module


def test_the_frontends_own_cudnn_is_kept(monkeypatch: pytest.MonkeyPatch, frontend: types.ModuleType) -> None:
    loader = Loader(opened=True)  # the frontend opened one at import
    monkeypatch.setattr(dnn_nvidia.ctypes, "CDLL", loader)
    assert dnn_nvidia._import_frontend() is frontend
    assert loader.calls == ["libcudnn.so.9"]  # the RTLD_NOLOAD check only: nothing else opened


def test_the_pip_wheels_cudnn_comes_before_the_loaders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      frontend: types.ModuleType) -> None:
    wheel = tmp_path / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
    wheel.parent.mkdir(parents=True)
    wheel.touch()
    loader = Loader(opened=False)  # an older frontend: it opens cuDNN by soname at its first call
    monkeypatch.setattr(dnn_nvidia.ctypes, "CDLL", loader)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "elsewhere"), str(tmp_path)])
    dnn_nvidia._import_frontend()
    assert loader.calls == ["libcudnn.so.9", str(wheel)]


def test_without_a_wheel_the_loaders_cudnn_is_opened(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     frontend: types.ModuleType) -> None:
    loader = Loader(opened=False)
    monkeypatch.setattr(dnn_nvidia.ctypes, "CDLL", loader)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    dnn_nvidia._import_frontend()
    assert loader.calls == ["libcudnn.so.9", "libcudnn.so.9"]


def test_no_cudnn_at_all_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              frontend: types.ModuleType) -> None:
    monkeypatch.setattr(dnn_nvidia.ctypes, "CDLL", Loader(opened=False, system=False))
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    with pytest.raises(OSError, match=r"libcudnn\.so\.9 not found \(install nvidia-cudnn-cu13"):
        dnn_nvidia._import_frontend()


def test_the_preload_maps_one_cudnn_with_the_sub_libraries_a_convolution_needs() -> None:
    """With the real cuDNN wheel (where it is installed): the preload's mapping of the dnn kind leaves
    one libcudnn.so.9 in the process, the sub-libraries beside it (one needing the CUDA driver only
    where the driver is), and imports no frontend; the frontend then finds that copy."""
    pytest.importorskip("cudnn", reason="nvidia-cudnn-frontend is not installed")
    code = ("import ctypes, os, sys\n"
            "from rocm_array.runtime import dnn_nvidia, vendor\n"
            "os.environ[vendor.PRELOAD_VAR] = 'dnn'\n"
            "vendor.preload('nvidia').join()\n"
            "assert 'cudnn' not in sys.modules\n"
            "maps = {l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn' in l}\n"
            "mains = [m for m in maps if os.path.basename(m) == 'libcudnn.so.9']\n"
            "assert len(mains) == 1, maps\n"
            "names = [c[0] for c in vendor.KINDS['dnn']['nvidia'].files]\n"
            "try:\n"
            "    ctypes.CDLL('libcuda.so.1')\n"
            "except OSError:\n"
            "    names = [n for n in names if 'runtime_compiled' not in n]\n"
            "missing = [n for n in names if os.path.join(os.path.dirname(mains[0]), n) not in maps]\n"
            "assert not missing, (missing, maps)\n"
            "dnn_nvidia._import_frontend()\n"
            "after = {l.split()[-1] for l in open('/proc/self/maps') if l.rstrip().endswith('/libcudnn.so.9')}\n"
            "assert after == set(mains), after\n")
    run_python(code)
