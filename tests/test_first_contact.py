"""What a user sees at first contact, over a recording driver (no GPU): a first call compiles only
its instantiation (a warmed group is used whole), a slow compile is a log line, a fallback from a
vendor library is one warning per cause, and ``info`` lists each GPU's vendor libraries."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

from rocm_array import devices
from rocm_array.devices import Device
from rocm_array.memory import copies
from rocm_array.runtime import compiler as compiler_module
from rocm_array.runtime import vendor
from rocm_array.runtime.compiler import Compiler
from rocm_array.runtime.gpu import GpuRuntime

from helpers import RecordingDriver, read_argument, run_python

nvidia = pytest.importorskip("rocm_array.runtime.nvidia", reason="cuda-bindings is not installed")

GROUP = ["fill<float>", "fill<int8_t>", "fill<double>"]
SOURCE, OPTIONS = copies.COPIES.source, copies.COPIES.options("nvidia")


class CountingRtc(nvidia.NvrtcRtc):
    """NVRTC that records each program's instantiations (``programs``: how many; ``names``: which)."""

    def __init__(self) -> None:
        self.programs: list[int] = []
        self.names: list[str] = []
        self._index: dict[int, int] = {}
        self._lock = threading.Lock()  # programs may compile on several threads

    def create(self, source: str, filename: str, headers: dict[str, str]) -> object:
        prog = super().create(source, filename, headers)
        with self._lock:
            self._index[id(prog)] = len(self.programs)
            self.programs.append(0)
        return prog

    def add_name(self, prog: object, expr: str) -> None:
        with self._lock:
            self.programs[self._index[id(prog)]] += 1
            self.names.append(expr)
        super().add_name(prog, expr)


@pytest.fixture
def runtime(tmp_path: Path) -> GpuRuntime:
    rt = GpuRuntime(RecordingDriver())  # type: ignore[arg-type]
    try:
        rtc = CountingRtc()
        rtc.version()
    except Exception as exc:  # NVRTC's library missing
        pytest.skip(f"NVRTC unavailable: {exc}")
    rt.compiler = Compiler(rtc, "sm_90", 32, tmp_path)
    return rt


def test_a_first_call_compiles_only_its_instantiation(runtime: GpuRuntime) -> None:
    runtime.kernel(SOURCE, "fill<float>", GROUP, OPTIONS)
    assert runtime.compiler.rtc.programs == [1]  # one program of one instantiation, not the group's three
    runtime.kernel(SOURCE, "fill<int8_t>", GROUP, OPTIONS)
    assert runtime.compiler.rtc.programs == [1, 1]


def test_a_warmed_group_is_used_whole(runtime: GpuRuntime, tmp_path: Path) -> None:
    runtime.compiler.compile(SOURCE, GROUP, OPTIONS)  # what `python -m rocm_array warm` does
    fresh = GpuRuntime(RecordingDriver())  # type: ignore[arg-type]  (a new process: an empty memory cache)
    fresh.compiler = Compiler(CountingRtc(), "sm_90", 32, tmp_path)
    for name in GROUP:
        fresh.kernel(SOURCE, name, GROUP, OPTIONS)
    assert fresh.compiler.rtc.programs == []  # nothing compiled: the group came from the disk cache
    assert fresh.driver.modules == 1  # and was loaded once
    again = GpuRuntime(RecordingDriver())  # type: ignore[arg-type]
    again.compiler = Compiler(CountingRtc(), "sm_90", 32, tmp_path)
    again.prepare([(SOURCE, name, GROUP, OPTIONS) for name in GROUP])  # as a back making ready its kernels
    assert again.compiler.rtc.programs == [] and again.driver.modules == 1


class MeetingRtc(CountingRtc):
    """Each compile waits until ``meet`` compiles have started: only compiles running at once pass."""

    def __init__(self, meet: int) -> None:
        super().__init__()
        self.barrier = threading.Barrier(meet, timeout=60)

    def compile(self, prog: object, options: list[str]) -> bool:
        self.barrier.wait()  # BrokenBarrierError (a failed test) when the compiles ran one after another
        return super().compile(prog, options)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one processor: the compile threads are one")
def test_kernels_a_call_prepares_compile_at_once(runtime: GpuRuntime) -> None:
    rtc = runtime.compiler.rtc = MeetingRtc(2)
    runtime.prepare([(SOURCE, "fill<float>", GROUP, OPTIONS), (SOURCE, "fill<double>", GROUP, OPTIONS)])
    assert rtc.programs == [1, 1]  # one program each, compiled side by side
    runtime.kernel(SOURCE, "fill<float>", GROUP, OPTIONS)
    runtime.kernel(SOURCE, "fill<double>", GROUP, OPTIONS)
    runtime.prepare([(SOURCE, "fill<double>", GROUP, OPTIONS)])
    assert rtc.programs == [1, 1]  # ready: nothing compiled again


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one processor: the compile threads are one")
def test_a_first_reduction_compiles_its_own_kernels_at_once(runtime: GpuRuntime) -> None:
    """A sum over the rows of 2**20 float32 cuts each row in chunks: its first pass (the contiguous
    kernel, not the strided one or a column layout's) and the second pass compile alone, side by
    side; a full sum is one kernel, compiled alone."""
    import rocm_array as xp
    from rocm_array import dtypes, memory
    from rocm_array_plugins.reduction.gpu import REDUCTION

    rtc = runtime.compiler.rtc = MeetingRtc(2)
    x = memory.empty((2, 1 << 20), dtypes.float32, Device("gpu", 0, runtime))
    xp.sum(x, axis=1)
    passes = ["reduce_inner<float, float, float, ra_red::identity_op, ra_red::add_op, ra_red::identity_op>",
              "reduce_partial_rows<float, float, ra_red::identity_op, ra_red::add_op, ra_red::identity_op>"]
    assert rtc.programs == [1, 1] and sorted(rtc.names) == passes
    launched = [launch[0] for launch in runtime.driver.launches[-2:]]  # (the recorder's functions: lowered names)
    assert launched == [runtime.kernel(REDUCTION.source, name, (), REDUCTION.options("nvidia")) for name in passes]
    runtime.driver.launches.clear()
    runtime.compiler.rtc = alone = CountingRtc()
    xp.sum(x[0])
    one = "reduce_all<float, float, float, ra_red::identity_op, ra_red::add_op, ra_red::identity_op>"
    assert alone.names == [one]
    assert [launch[0] for launch in runtime.driver.launches] == [runtime.kernel(REDUCTION.source, one, (),
                                                                               REDUCTION.options("nvidia"))]


def test_a_first_full_reduction_keeps_its_counter_apart_from_its_partials(runtime: GpuRuntime,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """reduce_all's counter of finished blocks, made at a process's first full reduction, is never the
    block of that launch's partials (which the blocks write: the counter would then be garbage for
    every later launch), with fusion on (reduce_all_of) and off (reduce_all), nor of a later launch's
    through the reduction's plan (``_Plan``)."""
    import ctypes

    import rocm_array as xp
    from rocm_array import dtypes, fusion, memory
    from rocm_array_plugins.elementwise import deferred
    from rocm_array_plugins.reduction import gpu as reduction_gpu

    monkeypatch.setattr(deferred, "COMPILE_IN_BACKGROUND", False)  # the fused kernel at once
    seen: list[tuple[str, int, int]] = []  # (kernel, partials, counter), read as each launch is sent
    recorder, send = runtime.driver, runtime.driver.sender

    def sender(function: str, block: tuple[int, int, int], shared: int) -> Callable[[Any, int], None]:
        inner = send(function, block, shared)

        def capture(grid: Any, params: int) -> None:
            seen.append((function, *(read_argument(params, i, ctypes.c_void_p).value for i in (1, 2))))
            inner(grid, params)
        return capture

    monkeypatch.setattr(recorder, "sender", sender)
    x = memory.empty((1 << 16,), dtypes.float32, Device("gpu", 0, runtime))  # 8 splits: 256 bytes of partials
    was = fusion.enabled()
    try:
        for fused in (False, True):
            fusion.set_enabled(fused)
            monkeypatch.setattr(reduction_gpu, "_DONE", {})
            seen.clear()
            xp.sum(x * 2 if fused else x)
            function, part, done = seen[-1]
            assert "reduce_all" in function and ("reduce_all_of" in function) == fused
            assert part != done
            if not fused:
                xp.sum(x)  # (planned at the first call)
                assert seen[-1][0] == function and seen[-1][2] == done and seen[-1][1] != done
    finally:
        fusion.set_enabled(was)


@pytest.mark.parametrize("n,variants", [(1 << 20, ("true",)), ((1 << 20) + 5, ("true", "false")),
                                         (100, ("false",))])
def test_a_first_sort_compiles_the_tile_kernels_it_launches(runtime: GpuRuntime, n: int,
                                                            variants: tuple[str, ...]) -> None:
    """A radix pass is a kernel of the full tiles and one of the last, partial tile (each compiles
    in 60% of the time of one kernel holding both); a sort compiles those it launches."""
    import rocm_array as xp
    from rocm_array import dtypes, memory

    rtc = runtime.compiler.rtc = CountingRtc()
    xp.sort(memory.empty((n,), dtypes.float32, Device("gpu", 0, runtime)))
    assert sorted(rtc.names) == sorted(["sort_counts<uint32_t>",
                                        *(f"radix_onesweep<uint32_t, uint32_t, void, {v}>" for v in variants)])


def test_a_slow_compile_is_a_notice(runtime: GpuRuntime, caplog: pytest.LogCaptureFixture,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with caplog.at_level(logging.INFO, logger="rocm_array"):
        runtime.kernel(SOURCE, "fill<float>", GROUP, OPTIONS)
    assert not caplog.records  # a fast compile is only a debug record
    monkeypatch.setattr(compiler_module, "NOTICE_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="rocm_array"):
        runtime.kernel(SOURCE, "fill<double>", GROUP, OPTIONS)
        runtime.kernel(SOURCE, "fill<double>", GROUP, OPTIONS)  # cached: no second notice
    [record] = caplog.records
    assert record.name == "rocm_array" and record.levelno == logging.INFO
    assert "compiled copy/copy.hip [fill<double>] for sm_90" in record.getMessage()
    assert "(first use; cached afterwards in" in record.getMessage()


def test_the_log_level_comes_from_the_environment() -> None:
    code = "import logging, rocm_array; print(logging.getLevelName(logging.getLogger('rocm_array').level))"
    for value, level in (("debug", "DEBUG"), ("warning", "WARNING"), (None, "INFO")):
        env = {k: v for k, v in __import__("os").environ.items() if k != "ROCM_ARRAY_LOG"}
        if value:
            env["ROCM_ARRAY_LOG"] = value
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        assert out.stdout.strip() == level, out.stderr


def _gpu(monkeypatch: pytest.MonkeyPatch) -> Device:
    rt = GpuRuntime(RecordingDriver())  # type: ignore[arg-type]
    return Device("gpu", 0, rt)


def test_a_fallback_is_one_warning_per_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocm_array_plugins.nn import gpu as nn_gpu

    def unavailable(kind: str, rt: object) -> object:
        raise vendor.VendorUnavailable(f"cuDNN is unavailable ({kind}): ModuleNotFoundError: No module named 'cudnn'")

    monkeypatch.setattr(vendor, "library", unavailable)
    monkeypatch.setattr(vendor, "_WARNED", set())
    monkeypatch.delenv("ROCM_ARRAY_NN_VENDOR", raising=False)
    device = _gpu(monkeypatch)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert nn_gpu._vendor(device) is None
        assert nn_gpu._vendor(device) is None  # the same cause again: no second warning
    [w] = seen
    assert issubclass(w.category, vendor.VendorFallbackWarning)
    assert "convolutions and pooling runs on rocm_array's own kernels" in str(w.message)
    assert "No module named 'cudnn'" in str(w.message)
    monkeypatch.setenv("ROCM_ARRAY_NN_VENDOR", "0")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert nn_gpu._vendor(device) is None
    assert not seen  # turned off by the user: own kernels, as asked, without a warning


def test_info_lists_each_gpus_vendor_libraries(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from rocm_array.__main__ import main

    gpu = _gpu(monkeypatch)
    monkeypatch.setattr(devices, "available", lambda: (devices.cpu, gpu))
    monkeypatch.setattr(devices, "default", lambda: devices.cpu)
    problems = {"dnn": "cuDNN is unavailable on nvidia device 0: ModuleNotFoundError: No module named 'cudnn'; "
                       'python -m pip install ".[nvidia]"'}
    monkeypatch.setattr(vendor, "why", lambda kind, rt: problems.get(kind, ""))
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "cuBLAS and cuSOLVER: found (" in out and "cuFFT: found (" in out
    assert "cuDNN: MISSING: cuDNN is unavailable on nvidia device 0" in out and 'python -m pip install ".[nvidia]"' in out


def test_warm_is_a_command(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from rocm_array.__main__ import main

    monkeypatch.setattr(devices, "default", lambda: devices.cpu)
    assert main(["warm"]) == 0  # optional: without a GPU, nothing to do, and it says so
    assert "not a GPU; nothing to compile" in capsys.readouterr().out
    assert main(["warm", "--device", "cpu"]) == 1  # a device named that is no GPU is an error
    assert "cpu is not a GPU" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["warm", "--help"])
    shown = capsys.readouterr().out
    assert "Fill the kernel cache of a GPU" in shown and "``" not in shown
    for command in ("info", "plugins"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert len(capsys.readouterr().out.split("\n\n")) >= 3  # usage, a description, options


def test_warm_compiles_the_files_not_the_generated_examples() -> None:
    """``warm`` compiled the compile check's generated fused examples by their path alone, without
    their text, and each failed (10 failures on an H100); they are not warmed at all now."""
    from rocm_array.compile_check import kernel_sources
    from rocm_array.warm import programs

    every = programs()
    assert every and all(ks.source is None for ks in every)
    assert any(ks.source is not None for ks in kernel_sources())  # the check still builds them
    reductions = programs(["reduction"])
    assert reductions and all(ks.path.startswith("reduction") for ks in reductions)


def test_vendor_modules_load_without_nvmath_itself() -> None:
    """cuBLAS and cuFFT's modules import no binding (they call the libraries through ctypes);
    cuSOLVER's binding loads at the first solver call without nvmath's package initializer (0.6 s),
    and a later ``import nvmath`` still works and shares the module."""
    pytest.importorskip("nvmath.bindings.cusolverDn", reason="nvmath-python is not installed")
    code = ("import sys, rocm_array.runtime.blas_nvidia as b, rocm_array.runtime.fft_nvidia\n"
            "assert not [m for m in sys.modules if m.startswith('nvmath')], sorted(sys.modules)\n"
            "solver = b._cusolver_dn()\n"
            "assert 'nvmath' not in sys.modules and 'nvmath.linalg' not in sys.modules\n"
            "import nvmath\n"
            "assert nvmath.bindings.cusolverDn is solver\n")
    run_python(code)


def test_preload_maps_each_librarys_files_on_a_thread_and_leaves_failures_to_the_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``vendor.preload`` maps the files of each kind ``ROCM_ARRAY_PRELOAD`` names (``blas,fft,dnn``
    by default, in turn) on a thread of its own, the first of each choice that opens; one that
    opens nowhere is passed over (``library`` reports it at the call), and ``0`` turns it off."""
    mapped: list[tuple[str, str]] = []
    present = {"libdnn.so.1", "libblas.so.2", "liblt.so.1"}

    def map_first(choice: tuple[str, ...]) -> str | None:
        name = next((n for n in choice if n in present), None)
        if name is not None:
            mapped.append((name, threading.current_thread().name))
        return name

    files = {"blas": (("libblas.so.3", "libblas.so.2"), ("liblt.so.1",)), "fft": (("libfft.so.1",),),
             "dnn": (("libdnn.so.1",),)}
    for kind, choices in files.items():
        monkeypatch.setitem(vendor.KINDS[kind], "fake", vendor.Library(f"fake {kind}", files=choices))
    monkeypatch.setattr(vendor.libfiles, "map_first", map_first)
    monkeypatch.setenv(vendor.PRELOAD_VAR, "0")
    assert vendor.preload("fake") is None and not mapped
    monkeypatch.delenv(vendor.PRELOAD_VAR)
    thread = vendor.preload("fake")
    assert thread is not None
    thread.join(timeout=30)
    name = "rocm_array preload fake"
    assert mapped == [("libblas.so.2", name), ("liblt.so.1", name), ("libdnn.so.1", name)]  # no fft
    monkeypatch.setenv(vendor.PRELOAD_VAR, "dnn")
    thread = vendor.preload("fake")
    assert thread is not None
    thread.join(timeout=30)
    assert mapped[3:] == [("libdnn.so.1", name)]


def test_the_preload_imports_nothing_and_leaves_the_interpreter_free() -> None:
    """The real preload of every kind of the nvidia platform imports no module (no binding, no
    frontend, no other framework), and the main thread's Python runs on while the loader maps the
    files: no pause between two steps of a busy loop exceeds 20 ms (a held lock shows as one gap
    of the mapping's length, 40-75 ms for cuDNN's engines)."""
    code = ("import os, sys, time\n"
            "from rocm_array.runtime import vendor\n"
            "before = set(sys.modules)\n"
            "t = vendor.preload('nvidia')\n"
            "gaps, last = [], time.perf_counter()\n"
            "while t.is_alive():\n"
            "    now = time.perf_counter(); gaps.append(now - last); last = now\n"
            "t.join()\n"
            "new = sorted(set(sys.modules) - before)\n"
            "assert not new, new\n"
            "print(max(gaps) * 1e3)\n")
    assert float(run_python(code)) < 20


def test_preload_names_a_kind_it_does_not_know(monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """A misspelt ``ROCM_ARRAY_PRELOAD`` entry is a warning naming it and the kinds, not a silent skip."""
    monkeypatch.setenv(vendor.PRELOAD_VAR, "blsa")
    with caplog.at_level(logging.WARNING, logger="rocm_array"):
        assert vendor.preload("fake") is None
    assert "ROCM_ARRAY_PRELOAD='blsa': blsa is not a vendor library kind" in caplog.text
    assert "blas, fft, dnn" in caplog.text


def test_discovery_preloads_only_where_devices_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery starts the preload of a platform whose driver counts devices, before opening them."""
    from rocm_array import runtime

    started: list[str] = []
    monkeypatch.setattr(vendor, "preload", lambda name: started.append(name))
    monkeypatch.setenv("ROCM_ARRAY_PLATFORM", "nvidia")
    monkeypatch.setattr(nvidia, "count_devices", lambda: 0)
    monkeypatch.setattr(nvidia, "open_devices", lambda: [])
    assert runtime.discover()[0] == [] and started == []
    monkeypatch.setattr(nvidia, "count_devices", lambda: 1)
    assert runtime.discover()[0] == [] and started == ["nvidia"]
