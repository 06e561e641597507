"""The run-time compiler and its cache, without a GPU (NVRTC needs none), and the
platform-neutral runtime pieces that need no device: dimension merging, kernel
arguments, DLPack capsules (checked against NumPy's consumer), discovery."""

from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from rocm_array import dtypes
from rocm_array.array import Array, contiguous_strides
from rocm_array.runtime import compiler
from rocm_array.runtime.compiler import (CompileError, Compiler, compile_program, included_headers, kernel_headers,
                                         kernel_source, python_code, source_digest)
from rocm_array.hookspecs import KernelSource
from rocm_array.memory import copies
from rocm_array.runtime import dlpack, layout
from rocm_array.runtime.buffer import DeviceBuffer
from rocm_array.runtime.targets import hiprtc_name

nvidia = pytest.importorskip("rocm_array.runtime.nvidia", reason="cuda-bindings is not installed")


class CountingRtc(nvidia.NvrtcRtc):
    """NVRTC that counts compilations and can be handed a broken source."""

    def __init__(self, source: str | None = None) -> None:
        self.compiles = 0
        self.source = source

    def create(self, source: str, filename: str, headers: dict[str, str]) -> object:
        return super().create(self.source or source, filename, headers)

    def compile(self, prog: object, options: list[str]) -> bool:
        self.compiles += 1
        return super().compile(prog, options)


FILL = ["fill<float>", "fill<int8_t>"]
SOURCE, OPTIONS = copies.COPIES.source, copies.COPIES.options("nvidia")


@pytest.fixture()
def rtc() -> CountingRtc:
    try:
        rtc = CountingRtc()
        rtc.version()
    except Exception as exc:  # NVRTC's library missing
        pytest.skip(f"NVRTC unavailable: {exc}")
    return rtc


def test_compile_and_lowered_names(rtc: CountingRtc, tmp_path: Path) -> None:
    c = Compiler(rtc, "sm_90", 32, tmp_path)
    prog = c.compile(SOURCE, FILL, OPTIONS)
    assert prog.code[:4] == b"\x7fELF"  # a cubin
    assert set(prog.lowered) == set(FILL)
    assert prog.lowered["fill<float>"].startswith("_Z4fillIfE")


def test_memory_and_disk_cache(rtc: CountingRtc, tmp_path: Path) -> None:
    first = Compiler(rtc, "sm_90", 32, tmp_path).compile(SOURCE, FILL, OPTIONS)
    again = Compiler(rtc, "sm_90", 32, tmp_path)
    assert again.compile(SOURCE, FILL, OPTIONS) == first  # from disk, after a "restart"
    assert again.compile(SOURCE, FILL, OPTIONS) is again.compile(SOURCE, FILL, OPTIONS)  # from memory
    assert rtc.compiles == 1
    assert [p.name for p in tmp_path.iterdir()] == [f"{first.key}.bin"]  # no temp files left


def test_cache_dir_from_environment(rtc: CountingRtc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCM_ARRAY_CACHE_DIR", str(tmp_path / "env"))
    prog = Compiler(rtc, "sm_90", 32).compile(SOURCE, ["fill<bool>"], OPTIONS)
    assert (tmp_path / "env" / f"{prog.key}.bin").is_file()


def test_key_covers_everything(rtc: CountingRtc, tmp_path: Path) -> None:
    c = Compiler(rtc, "sm_90", 32, tmp_path)
    base = c.key(SOURCE, FILL)
    assert base == c.key(SOURCE, list(FILL))
    assert base != c.key(SOURCE, FILL[:1])
    assert base != c.key(SOURCE, FILL, ["-DEXTRA=1"])
    assert base != Compiler(rtc, "sm_80", 32, tmp_path).key(SOURCE, FILL)
    assert base != Compiler(rtc, "sm_90", 64, tmp_path).key(SOURCE, FILL)
    rtc.version = lambda: "999.0"  # type: ignore[method-assign]
    assert base != Compiler(rtc, "sm_90", 32, tmp_path).key(SOURCE, FILL)


def test_cached_says_whether_a_compile_would_run(rtc: CountingRtc, tmp_path: Path) -> None:
    c = Compiler(rtc, "sm_90", 32, tmp_path)
    assert not c.cached(SOURCE, FILL, OPTIONS)
    c.compile(SOURCE, FILL, OPTIONS)
    again = Compiler(rtc, "sm_90", 32, tmp_path)
    assert again.cached(SOURCE, FILL, OPTIONS) and not again.cached(SOURCE, FILL[:1], OPTIONS)
    again.compile(SOURCE, FILL, OPTIONS)
    assert rtc.compiles == 1


def test_key_covers_the_headers_a_source_includes(rtc: CountingRtc, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """copy.hip includes common/types.h (and portability.h through it), not an elementwise header:
    an edit of the one changes its key, of the other not (only the programs using it compile again)."""
    c = Compiler(rtc, "sm_90", 32, tmp_path)
    base = c.key(SOURCE, FILL)
    real = compiler._header
    for name, changes in (("common/portability.h", True), ("elementwise/complex.h", False)):
        edited = real(name) + "\n// edit"
        monkeypatch.setattr(compiler, "_header", lambda n, name=name, edited=edited: edited if n == name else real(n))
        source_digest.cache_clear()  # (a process's headers never change: the digest is kept per text)
        assert (c.key(SOURCE, FILL) != base) is changes, name
    monkeypatch.setattr(compiler, "_header", real)
    source_digest.cache_clear()
    assert [n for n, _ in included_headers('#include "elementwise/ops.h"', ["-include", "sim/sim.h"])] == [
        "common/portability.h", "common/types.h", "elementwise/complex.h", "elementwise/math.h", "elementwise/ops.h",
        "sim/abi.h", "sim/sim.h"]  # through ops.h's own includes, and the simulator's -include


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_entry_is_recompiled(rtc: CountingRtc, tmp_path: Path, damage: str) -> None:
    prog = Compiler(rtc, "sm_90", 32, tmp_path).compile(SOURCE, FILL, OPTIONS)
    entry = tmp_path / f"{prog.key}.bin"
    data = entry.read_bytes()
    entry.write_bytes({"truncate": data[: len(data) // 2],
                       "flip": data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:],
                       "garbage": os.urandom(64), "empty": b""}[damage])
    again = Compiler(rtc, "sm_90", 32, tmp_path).compile(SOURCE, FILL, OPTIONS)
    assert again == prog and rtc.compiles == 2
    assert entry.read_bytes() == data  # replaced by a good entry


def test_unwritable_cache_still_compiles(rtc: CountingRtc, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    prog = Compiler(rtc, "sm_90", 32, blocker / "cache").compile(SOURCE, FILL, OPTIONS)
    assert prog.lowered


def test_python_code_is_compiled_once_a_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane's generated Python (gpu_lanes) is kept as marshal bytes: a later process reads it back;
    a damaged entry is compiled again and replaced; an unwritable folder still compiles."""
    monkeypatch.setenv("ROCM_ARRAY_CACHE_DIR", str(tmp_path))
    compiled = []
    real = compile

    def counting(*args: object, **kwargs: object) -> object:
        compiled.append(args[1])
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.compile", counting)
    source = "k = 3\ndef f(x):\n    return x * k\n"
    for _ in range(2):
        names: dict[str, object] = {}
        exec(python_code(source, "<lane test>"), names)
        assert names["f"](2) == 6  # type: ignore[operator]
    assert compiled == ["<lane test>"]
    (entry,) = (tmp_path / "python").iterdir()
    good = entry.read_bytes()
    entry.write_bytes(good[:-5] + bytes([good[-5] ^ 0xFF]) + good[-4:])
    assert python_code(source, "<lane test>").co_filename == "<lane test>" and len(compiled) == 2
    again = entry.read_bytes()  # replaced by a good entry (marshal's bytes may differ in their refs)
    assert again[:32] == hashlib.sha256(again[32:]).digest()
    assert python_code(source + "\n", "<lane test>") is not None and len(compiled) == 3  # (another text: another entry)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ROCM_ARRAY_CACHE_DIR", str(blocker))
    assert python_code(source, "<lane test>").co_filename == "<lane test>"


def test_compile_error_names_kernel_and_log(tmp_path: Path) -> None:
    bad = CountingRtc('#include "common/types.h"\ntemplate <typename T> __global__ void fill(T* x) '
                      '{ x[0] = undefined_symbol; }\n')
    with pytest.raises(CompileError) as info:
        Compiler(bad, "sm_90", 32, tmp_path).compile(SOURCE, ["fill<float>"], OPTIONS)
    err = info.value
    assert "fill<float>" in err.kernel and SOURCE in err.kernel
    assert "undefined_symbol" in err.log and "undefined_symbol" in str(err)
    assert "sm_90" in str(err)
    assert list(tmp_path.iterdir()) == []  # nothing cached


def test_wave_size_must_be_given() -> None:
    rtc = nvidia.NvrtcRtc()
    with pytest.raises(CompileError, match="RA_WAVE_SIZE"):
        compile_program(rtc, kernel_source(SOURCE), SOURCE, ["fill<float>"],
                        ["--gpu-architecture=sm_90", "--std=c++17", *OPTIONS], "sm_90")


def test_unknown_kernel_file() -> None:
    with pytest.raises(FileNotFoundError, match="no_such"):
        kernel_source("no_such/kernel.hip")


def test_hiprtc_spelling() -> None:
    assert hiprtc_name("copy_strided<int8_t, uint64_t>") == "copy_strided<signed char, unsigned long long>"
    assert hiprtc_name("fill<float16>") == "fill<float16>"


# -- platform-neutral runtime pieces ---------------------------------------------------------
def test_merge_dims() -> None:
    assert layout.merge_dims((2, 3, 4), (12, 4, 1), (12, 4, 1)) == ((24,), [(1,), (1,)])
    assert layout.merge_dims((2, 3, 4), (12, 4, 1), (1, 2, 6)) == ((2, 3, 4), [(12, 4, 1), (1, 2, 6)])
    assert layout.merge_dims((2, 1, 4), (4, 99, 1), (0, 7, 0)) == ((8,), [(1,), (0,)])
    assert layout.merge_dims((5, 6), (6, 1), (0, 1)) == ((5, 6), [(6, 1), (0, 1)])
    assert layout.merge_dims((), (), ()) == ((1,), [(1,), (1,)])
    assert layout.merge_dims((3, 0), (1, 1)) == ((0,), [(1,)])
    assert layout.merge_dims((4, 5), (-5, -1)) == ((20,), [(-1,)])



def test_crosses() -> None:
    assert layout.crosses((400, 1), (1, 300))  # dst row-major, src its transpose
    assert layout.crosses((400, 1), (-1, 300))  # negative strides count by size
    assert not layout.crosses((400, 1), (300, 1))  # both fast along axis 1
    assert not layout.crosses((1, 400), (1, 300))  # both fast along axis 0
    assert not layout.crosses((400, 1), (0, 300))  # a broadcast source

def test_geometry_layout() -> None:
    g = layout.geometry((3, 4), (4, 1), (1, 3))
    assert ctypes.sizeof(g) == 8 * 8 * 3 + 8
    assert (g.ndim, list(g.shape[:2]), list(g.strides[1][:2])) == (2, [3, 4], [1, 3])
    with pytest.raises(ValueError, match="at most"):
        layout.geometry((1,) * 9, (1,) * 9)


@pytest.mark.parametrize("dtype", dtypes.ALL, ids=lambda d: d.name)
def test_scalar_arg(dtype: dtypes.DType) -> None:
    arg = layout.scalar_arg(dtype, 1)
    assert ctypes.sizeof(arg) == dtype.itemsize
    assert bytes(arg) == np.ones((), dtype.numpy).tobytes()


def test_grid_1d() -> None:
    assert layout.grid_1d(1, 100) == 1
    assert layout.grid_1d(10**9, 100) == 100 * layout.BLOCKS_PER_CU


def test_copy_kernel_sources_cover_every_pair() -> None:
    names = {n for ks in copies.kernel_sources() for n in ks.names}
    assert len(names) == 15 + 3 * 15 * 15
    assert "copy_transpose<complex128, bfloat16>" in names and "fill<bool>" in names


class _HostExport:
    """A host-memory Array exported through rocm_array's own capsule code, for NumPy to consume."""

    def __init__(self, x: Array, versioned: bool, device: tuple[int, int] = (dlpack.DL_CPU, 0)) -> None:
        self.x, self.versioned, self.device = x, versioned, device

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, **kwargs: object) -> object:
        x = self.x
        ptr = x._buf.ptr + x.offset * x.dtype.itemsize
        return dlpack.export(ptr, x.shape, x.strides, x.dtype, self.device, self.versioned, False, owner=x)


def _host_array(a: np.ndarray, dtype: dtypes.DType) -> tuple[Array, np.ndarray]:
    base = np.ascontiguousarray(a)
    buf = DeviceBuffer(base.ctypes.data, base.nbytes, 0, None, owner=base)
    return Array(buf, base.shape, contiguous_strides(base.shape), 0, dtype, "host"), base  # type: ignore[arg-type]


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("dtype", [d for d in dtypes.ALL if d is not dtypes.bfloat16], ids=lambda d: d.name)
def test_dlpack_capsules_numpy_reads(dtype: dtypes.DType, versioned: bool) -> None:
    x, base = _host_array(np.arange(12).reshape(3, 4).astype(dtype.numpy), dtype)
    got = np.from_dlpack(_HostExport(x._view((4, 3), (1, 4), 0), versioned))
    np.testing.assert_array_equal(got, base.T)
    assert dlpack._exported  # kept alive until NumPy's array goes
    del got
    assert not any(entry[3].shape == (4, 3) for entry in dlpack._exported.values())


def test_dlpack_unconsumed_capsule_releases() -> None:
    x, _ = _host_array(np.arange(5.0), dtypes.float64)
    before = len(dlpack._exported)
    capsule = _HostExport(x, True).__dlpack__()
    also = capsule
    dlpack.sweep()
    assert len(dlpack._exported) == before + 1
    del capsule
    dlpack.sweep()
    assert len(dlpack._exported) == before + 1  # (still held)
    del also
    dlpack.sweep()  # (the next export's)
    assert len(dlpack._exported) == before


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_capsule_a_consumer_refuses(versioned: bool) -> None:
    # NumPy refuses another device's capsule; its error is the one raised (the capsule's Python
    # destructor had cleared it, and Python raised SystemError), and the export is released.
    x, _ = _host_array(np.arange(5.0), dtypes.float64)
    before = len(dlpack._exported)
    with pytest.raises((RuntimeError, BufferError), match="(?i)device"):
        np.from_dlpack(_HostExport(x, versioned, device=(2, 0)))
    dlpack.sweep()
    assert len(dlpack._exported) == before


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_import_roundtrip(versioned: bool) -> None:
    x, _ = _host_array(np.arange(24, dtype=np.int32).reshape(2, 3, 4), dtypes.int32)
    view = x._view((2, 4), (12, -1), 3)  # negative strides: the buffer starts below the data
    capsule = dlpack.export(x._buf.ptr + 3 * 4, view.shape, view.strides, view.dtype, (dlpack.DL_CPU, 0), versioned,
                            False, owner=view)
    exported = len(dlpack._exported)
    y = dlpack.import_capsule(capsule, (dlpack.DL_CPU, 0), "host")
    assert (y.shape, y.strides, y.dtype) == ((2, 4), (12, -1), dtypes.int32)
    assert y.buffer.ptr + y.offset * 4 == x._buf.ptr + 3 * 4
    with pytest.raises(BufferError, match="consumed"):
        dlpack.import_capsule(capsule, (dlpack.DL_CPU, 0), "host")
    del capsule
    assert len(dlpack._exported) == exported  # the consumer (y) owns it now
    del y
    assert len(dlpack._exported) == exported - 1  # y's buffer called the producer's deleter


def test_dlpack_import_wrong_device() -> None:
    capsule = np.arange(3.0).__dlpack__()
    with pytest.raises(BufferError, match="not on"):
        dlpack.import_capsule(capsule, (2, 0), "gpu:0")


def test_compile_check_batches_keep_every_instantiation_once() -> None:
    from rocm_array.compile_check import batched

    sources = [KernelSource("a.hip", ("k<1>", "k<2>")), KernelSource("a.hip", ("k<2>", "k<3>")),
               KernelSource("a.hip", ("k<4>",), ("-DX",)), KernelSource("b.hip", ("j<1>",))]
    out = batched(sources, chunk=2)
    assert [(ks.path, ks.names, ks.options) for ks in out] == [
        ("a.hip", ("k<1>", "k<2>"), ()), ("a.hip", ("k<3>",), ()),
        ("a.hip", ("k<4>",), ("-DX",)), ("b.hip", ("j<1>",), ())]


def test_the_headers_are_the_package_folders_h_files_and_includes_are_line_starts() -> None:
    """``kernel_headers`` (what a compile passes) holds each ``.h`` of the kernels' folders, and
    ``included_headers`` finds an include only where a line starts with it (blanks before the ``#``)."""
    headers = kernel_headers()
    assert "common/types.h" in headers and "elementwise/ops.h" in headers
    assert all(n.endswith(".h") and not n.startswith("_") for n in headers)
    text = '  #  include "common/types.h"\n// #include "nn/nn.h"\nx #include "sim/sim.h"'
    assert [n for n, _ in included_headers(text)] == ["common/portability.h", "common/types.h"]
    assert included_headers('#include "common/missing.h"\n#include "../common/types.h"') == []
