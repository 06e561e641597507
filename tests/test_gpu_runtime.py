"""The GPU runtime on a real device (skipped where there is none): allocation and its
recovery from exhaustion, the compile cache across processes, copies and casts for
every dtype pair against NumPy, strided/transposed/broadcast copies, host transfers,
DLPack with PyTorch and CuPy, and cross-device errors."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import rocm_array as xp
from rocm_array import devices, dtypes, memory
from rocm_array.array import Array
from rocm_array.compile_check import PORTABILITY
from rocm_array.devices import Device
from rocm_array.dtypes import DType
from rocm_array.launch import address, ptr
from rocm_array.memory.gpu import import_dlpack
from rocm_array.runtime import staging

GPUS = devices.gpus()
pytestmark = pytest.mark.skipif(not GPUS, reason="no GPU: " + "; ".join(devices.gpu_problems()))


@pytest.fixture(scope="module")
def gpu() -> Device:
    return GPUS[0]


def _up(a: np.ndarray, dev: Device, dtype: DType | None = None) -> Array:
    dtype = dtype or dtypes.from_numpy(a.dtype)
    return memory.from_host(np.asarray(a, dtype.numpy), dtype, dev)


def _down(x: Array) -> np.ndarray:
    return memory.to_host(x)


def _equal(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == dtypes.bfloat16.numpy:
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want)


# -- device and memory ------------------------------------------------------------------------
def test_properties(gpu: Device) -> None:
    p = gpu.runtime.properties
    assert p.name and p.compute_units > 0 and p.total_memory > 2**30
    assert p.wave_size in (32, 64)
    assert p.arch.startswith({"nvidia": "sm_", "amd": "gfx", "sim": "sim"}[p.platform])
    assert gpu in xp.__array_namespace_info__().devices()
    assert devices.parse(f"gpu:{gpu.index}") is gpu


def test_allocation_is_freed_with_last_array(gpu: Device) -> None:
    rt = gpu.runtime
    rt.synchronize()
    used0, _ = rt.driver.pool_usage()
    x = memory.empty((64, 1024, 1024), dtypes.float32, gpu)  # 256 MiB
    view = x._view((1024,), (1,), 5)
    assert rt.driver.pool_usage()[0] >= used0 + 256 * 2**20
    del x
    rt.synchronize()
    assert rt.driver.pool_usage()[0] >= used0 + 256 * 2**20  # the view keeps the buffer
    del view
    rt.synchronize()
    assert rt.driver.pool_usage()[0] == used0


@pytest.mark.exclusive  # while the request fails, the driver holds the card: nothing may run beside it
def test_out_of_memory_then_usable(gpu: Device) -> None:
    rt = gpu.runtime
    total = rt.properties.total_memory
    with pytest.raises(MemoryError, match="more than the device's"):  # refused before the driver is asked
        memory.empty((2**62,), dtypes.float64, gpu)  # (2^65 bytes: past what the bindings take, too)
    held_now = memory.empty((2**17,), dtypes.float64, gpu)  # so that the whole card cannot be free
    with pytest.raises(MemoryError) as info:  # the driver refuses; the pool gives back what it reserved
        memory.empty((total // 8,), dtypes.float64, gpu)
    msg = str(info.value)
    assert str(total // 8 * 8) in msg and "pool" in msg and f"gpu:{gpu.index}" in msg
    del held_now
    used, held = rt.driver.pool_usage()
    assert held <= used + 64 * 2**20  # nothing left reserved by the failed request
    x = memory.full((1000,), 3, dtypes.int32, gpu)
    _equal(_down(x), np.full(1000, 3, np.int32))


def test_zero_size_and_0d(gpu: Device) -> None:
    e = memory.empty((0, 5), dtypes.float32, gpu)
    assert _down(e).shape == (0, 5)
    s = memory.full((), 2.5, dtypes.float64, gpu)
    assert float(s) == 2.5 and _down(s).shape == ()
    h = _up(np.float32(1.5), gpu)
    assert h.shape == () and _down(h).shape == () and float(h) == 1.5


@pytest.mark.parametrize("nbytes", [1, 4 << 20, staging.CHUNK * 2 + 12345])
def test_host_roundtrip(gpu: Device, nbytes: int) -> None:
    a = np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8)
    _equal(_down(_up(a, gpu)), a)


def test_from_another_thread(gpu: Device) -> None:
    out: list[np.ndarray] = []
    t = threading.Thread(target=lambda: out.append(_down(memory.full((7,), 1.5, dtypes.float32, gpu))))
    t.start()
    t.join()
    _equal(out[0], np.full(7, 1.5, np.float32))


# -- the portability layer on the device ---------------------------------------------------------
def test_wave_primitives(gpu: Device) -> None:
    rt = gpu.runtime
    w = rt.properties.wave_size
    n = 4 * w
    host = (np.arange(n, dtype=np.float32) * 7 % 11) - 5
    x = _up(host, gpu)
    sums = memory.empty((4,), dtypes.float32, gpu)
    masks = memory.full((4,), 0, dtypes.uint64, gpu)
    lanes = memory.empty((n,), dtypes.int32, gpu)
    fn = rt.kernel(PORTABILITY.path, "wave_sum<float>", PORTABILITY.names)
    rt.launch(fn, (1, 1, 1), (n, 1, 1), [ptr(sums), ptr(masks), ptr(lanes), ptr(x)])
    _equal(_down(lanes), np.arange(n, dtype=np.int32) % w)  # RA_WAVE_SIZE is the hardware's
    _equal(_down(sums), host.reshape(4, w).sum(axis=1))
    want = [sum(1 << k for k in range(w) if row[k] > 0) for row in host.reshape(4, w)]
    _equal(_down(masks), np.array(want, np.uint64))


@pytest.mark.parametrize("kind", ["atomic_sum<double>", "atomic_sum<long long>", "atomic_max<float>"])
def test_atomics(gpu: Device, kind: str) -> None:
    rt = gpu.runtime
    dtype = {"double": dtypes.float64, "long long": dtypes.int64, "float": dtypes.float32}[kind.split("<")[1][:-1]]
    host = (np.arange(100_000) % 1000 - 300).astype(dtype.numpy)
    start = -1e30 if kind.startswith("atomic_max") else 0
    acc = memory.full((), start, dtype, gpu)
    n = host.size
    rt.launch(rt.kernel(PORTABILITY.path, kind, PORTABILITY.names), (64, 1, 1), (256, 1, 1),
              [ptr(acc), ptr(_up(host, gpu)), ctypes.c_int64(n)])
    assert _down(acc)[()] == (host.max() if kind.startswith("atomic_max") else host.sum())


# -- compiler cache across processes --------------------------------------------------------------
_COMPILE_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from rocm_array import devices
    from rocm_array.memory import copies
    from rocm_array.runtime import targets
    rt = devices.parse("gpu:0").runtime
    compiled = []
    real = rt.compiler.rtc.compile
    rt.compiler.rtc.compile = lambda *a: compiled.append(1) or real(*a)
    kind = targets.kind(rt.properties.arch, rt.properties.wave_size)
    ks = [k for k in copies.kernel_sources() if not k.kinds or kind in k.kinds][1]  # the first group of copies
    start = time.perf_counter()
    functions = rt.load(rt.compile(ks.path, ks.names, ks.options))
    print(json.dumps({"seconds": time.perf_counter() - start, "compiled": len(compiled),
                      "functions": len(functions), "cache": str(rt.compiler.cache)}))
""")


def _compile_in_new_process(env: dict[str, str]) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_cache_hit_after_restart(gpu: Device, tmp_path: Path) -> None:
    env = {**os.environ, "ROCM_ARRAY_CACHE_DIR": str(tmp_path), "ROCM_ARRAY_DEVICE": "gpu:0"}
    cold, warm = _compile_in_new_process(env), _compile_in_new_process(env)
    assert (cold["compiled"], warm["compiled"]) == (1, 0)
    assert cold["functions"] == warm["functions"] == 45 + 1
    assert warm["seconds"] < cold["seconds"]
    assert cold["cache"] == warm["cache"] == str(tmp_path)
    print(f"compile cold {cold['seconds']:.3f} s, warm {warm['seconds']:.3f} s")


# -- casts: every pair, three layouts ---------------------------------------------------------------
def _values(src: DType, dst: DType) -> np.ndarray:
    """Values whose conversion NumPy defines (no float -> int overflow or NaN)."""
    v = [0, 1, 2, 3, 7, 42, 100, 127]
    if src.kind in "fc":
        v += [0.5, 2.25, 99.75]
    if src.kind in "ifc" and (dst.kind != "u" or src.kind == "i"):
        v += [-1, -5, -128] + ([-3.75] if src.kind in "fc" else [])
    if src.kind in "fc" and dst.kind in "fcb":
        v += [np.nan, np.inf, -np.inf, 65504.0, 1e-3]
    a = np.array(v * 3, dtype=np.float64)[:24]
    if src.kind == "b":
        a = a % 2
    if src.kind == "c":  # real part a, imaginary part a reversed (a + 1j * inf would make a NaN real part)
        c = np.empty(a.shape, np.complex128)
        c.real, c.imag = a, a[::-1]
        return c.astype(src.numpy)
    return a.astype(src.numpy)


def _numpy_cast(a: np.ndarray, dst: DType) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if a.dtype.kind == "c" and dst.kind != "c":
            return (a != 0) if dst is dtypes.bool else a.real.astype(dst.numpy)
        return a.astype(dst.numpy)


@pytest.mark.parametrize("dst", dtypes.ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("src", dtypes.ALL, ids=lambda d: d.name)
def test_cast_every_pair(gpu: Device, src: DType, dst: DType) -> None:
    host = _values(src, dst).reshape(4, 6)
    want = _numpy_cast(host, dst)
    x = _up(host, gpu, src)
    for view, expect in ((x, want),  # contiguous
                         (x._view((2, 3), (12, 2), 1), want[::2, 1::2]),  # strided
                         (x._view((6, 4), (1, 6), 0), want.T)):  # transposed
        out = memory.empty(view.shape, dst, gpu)
        memory.copy_into(out, view)
        _equal(_down(out), np.ascontiguousarray(expect))


# -- layouts ----------------------------------------------------------------------------------------
LAYOUTS = {
    "transpose-large": ((1000, 1537), lambda a: a.T),
    "transpose-3d": ((7, 33, 65), lambda a: a.transpose(2, 0, 1)),
    "negative-strides": ((50, 70), lambda a: a[::-1, ::-2]),
    "slices": ((64, 64, 3), lambda a: a[3:60:5, ::3, 1]),
    "unmergeable-10d": ((2,) * 10, lambda a: a.transpose(9, 0, 8, 1, 7, 2, 6, 3, 5, 4)),
    "misaligned": ((1001,), lambda a: a[3:]),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
@pytest.mark.parametrize("dst_dtype", [dtypes.float32, dtypes.complex128, dtypes.int8], ids=lambda d: d.name)
def test_strided_copies(gpu: Device, name: str, dst_dtype: DType) -> None:
    shape, pick = LAYOUTS[name]
    host = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 100
    want = np.ascontiguousarray(pick(host)).astype(dst_dtype.numpy)
    x = _up(host, gpu)
    view = _view_like(x, host, pick)
    out = memory.empty(view.shape, dst_dtype, gpu)
    memory.copy_into(out, view)
    _equal(_down(out), want)
    _equal(_down(memory.contiguous(view)), np.ascontiguousarray(pick(host)))  # to_host of a strided view


def _view_like(x: Array, host: np.ndarray, pick) -> Array:  # type: ignore[no-untyped-def]
    """The view of ``x`` that ``pick`` makes of ``host`` (same buffer layout)."""
    v = pick(host)
    item = host.itemsize
    offset = (v.__array_interface__["data"][0] - host.__array_interface__["data"][0]) // item
    return x._view(v.shape, tuple(s // item for s in v.strides), offset)


def test_a_repeated_copy_runs_its_plan(gpu: Device) -> None:
    """A copy is planned at its first call for its dtypes and layouts (``_CopyPlan``): later copies of
    the kind, between other arrays at other offsets, give the right values through the one plan (a
    memcpy, a cast, a transpose, a strided write of a Jacobi sweep's interior)."""
    from rocm_array.memory import copies

    a, b = np.arange(48.0).reshape(6, 8), -np.arange(48.0).reshape(6, 8)
    cases = [(lambda x: x, lambda h: h, dtypes.float64),  # (same dtype, contiguous: a memcpy)
             (lambda x: x, lambda h: h, dtypes.float32),  # (copy_contiguous, a cast)
             (lambda x: x._view((8, 6), (1, 8), 0), lambda h: h.T, dtypes.float64),  # (copy_transpose)
             (lambda x: x._view((4, 6), (8, 1), 9), lambda h: h[1:-1, 1:-1], dtypes.int32)]  # (copy_strided)
    for pick, want, dtype in cases:
        copies._COPIES.clear()
        for h in (a, b, a):
            out = memory.empty(want(h).shape, dtype, gpu)
            memory.copy_into(out, pick(_up(h, gpu)))
            _equal(_down(out), want(h).astype(dtype.numpy))
        assert len(copies._COPIES) == 1
    copies._COPIES.clear()
    for h in (a, b):  # into a strided view: u[1:-1, 1:-1] = v
        u = _up(np.zeros((6, 8)), gpu)
        memory.copy_into(u._view((4, 6), (8, 1), 9), _up(h[1:-1, 1:-1].copy(), gpu))
        expected = np.zeros((6, 8))
        expected[1:-1, 1:-1] = h[1:-1, 1:-1]
        _equal(_down(u), expected)
    assert len(copies._COPIES) == 1


def test_strided_destination_and_broadcast(gpu: Device) -> None:
    dst_host = np.zeros((6, 8), np.int64)
    dst = _up(dst_host, gpu)
    row = _up(np.arange(4, dtype=np.float32), gpu)
    memory.copy_into(dst._view((3, 4), (16, 2), 1), row)  # every other row and column, broadcast row
    dst_host[::2, 1::2] = np.arange(4)
    _equal(_down(dst), dst_host)
    memory.copy_into(dst, memory.full((), 9, dtypes.int16, gpu))  # 0-d source
    _equal(_down(dst), np.full((6, 8), 9, np.int64))
    with pytest.raises(ValueError):
        memory.copy_into(dst, _up(np.arange(3), gpu))


def test_overlapping_copy(gpu: Device) -> None:
    host = np.arange(10, dtype=np.int32)
    x = _up(host, gpu)
    memory.copy_into(x._view((9,), (1,), 1), x._view((9,), (1,), 0))  # x[1:] = x[:-1]
    host[1:] = host[:-1].copy()
    _equal(_down(x), host)
    memory.copy_into(x, x)
    _equal(_down(x), host)


@pytest.mark.parametrize("dtype", dtypes.ALL, ids=lambda d: d.name)
def test_fill(gpu: Device, dtype: DType) -> None:
    value = {"b": True, "c": 1.5 - 2j}.get(dtype.kind, 3)
    _equal(_down(memory.full((3, 5), value, dtype, gpu)), np.full((3, 5), value, dtype.numpy))
    _equal(_down(memory.full((4,), 0, dtype, gpu)), np.zeros(4, dtype.numpy))  # memset path
    x = memory.full((4, 4), 0, dtype, gpu)
    memory.fill(x._view((2, 2), (8, 2), 0), value)  # a strided target
    want = np.zeros((4, 4), dtype.numpy)
    want[::2, ::2] = value
    _equal(_down(x), want)
    # contiguous targets off the 16-byte vector alignment and of lengths no vector divides: the
    # element loop takes the head or the tail
    y = memory.full((70,), 0, dtype, gpu)
    for start, n in ((1, 37), (0, 67), (3, 64)):
        memory.fill(y._view((n,), (1,), start), value)
        want = np.zeros(70, dtype.numpy)
        want[start:start + n] = value
        _equal(_down(y), want)
        memory.fill(y, 0)


# -- arrays on the GPU --------------------------------------------------------------------------------
def test_array_basics(gpu: Device) -> None:
    x = _up(np.arange(6, dtype=np.float32).reshape(2, 3), gpu)
    assert x.device == gpu and f"device={gpu}" in repr(x) and "5." in repr(x)
    assert float(x._view((), (), 4)) == 4.0 and int(x._view((), (), 5)) == 5
    back = x.to_device("cpu")
    assert back.device == devices.cpu
    _equal(np.asarray(back), np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(TypeError):
        np.asarray(x)


def test_cross_device_errors(gpu: Device) -> None:
    g = _up(np.arange(3.0), gpu)
    c = xp.asarray(np.arange(3.0), device="cpu")
    with pytest.raises(ValueError, match="devices"):
        memory.copy_into(g, c)
    with pytest.raises(ValueError, match="devices"):
        devices.check_same(g, c)
    with pytest.raises(ValueError, match="devices"):
        memory.copy_into(c, g)


def test_creation_functions(gpu: Device) -> None:
    dev = str(gpu)
    a = xp.asarray([[1, 2], [3, 4]], device=dev)
    assert a.device == gpu
    _equal(_down(a), np.array([[1, 2], [3, 4]], np.int64))
    _equal(_down(xp.zeros((2, 3), dtype=xp.float16, device=dev)), np.zeros((2, 3), np.float16))
    _equal(_down(xp.full((3,), 7, dtype=xp.uint8, device=dev)), np.full(3, 7, np.uint8))
    _equal(_down(xp.astype(a, xp.complex64)), np.array([[1, 2], [3, 4]], np.complex64))
    _equal(_down(xp.asarray(a, device="cpu").to_device(dev)), np.array([[1, 2], [3, 4]]))


# -- DLPack ------------------------------------------------------------------------------------------------
def test_dlpack_device(gpu: Device) -> None:
    x = _up(np.arange(3.0), gpu)
    kind = 2 if gpu.runtime.platform == "nvidia" else 10
    assert x.__dlpack_device__() == (kind, gpu.runtime.properties.index)
    got = np.from_dlpack(x, device="cpu")  # a host copy through dl_device
    _equal(got, np.arange(3.0))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0), copy=False)


TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
                "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", TORCH_DTYPES)
def test_dlpack_torch(gpu: Device, name: str) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    dtype = getattr(dtypes, name)
    host = (np.arange(12) % 2).astype(dtype.numpy).reshape(3, 4)
    if dtype.kind == "c":  # an imaginary part: the shared memory holds both halves
        host = host + 1j * (np.arange(12) % 3).astype(dtype.numpy).reshape(3, 4)
    x = _up(host, gpu)
    t = torch.from_dlpack(x)  # zero copy: same memory
    assert t.device.type == "cuda" and t.data_ptr() == address(x)
    assert tuple(t.shape) == (3, 4)
    if dtype.kind not in "b":
        t += 1
        torch.cuda.synchronize()
        wide = np.complex128 if dtype.kind == "c" else np.float64  # (bfloat16 adds in float64)
        _equal(_down(x), (host.astype(wide) + 1).astype(dtype.numpy))
    tt = torch.arange(20, device="cuda").reshape(4, 5).to(getattr(torch, name)).T  # strided producer
    y = import_dlpack(tt)
    assert y.device == gpu and y.shape == (5, 4) and y.strides == (1, 5)
    assert address(y) == tt.data_ptr()
    want = tt.cpu().float().numpy() if name == "bfloat16" else tt.cpu().numpy()
    _equal(_down(y).astype(np.float32) if name == "bfloat16" else _down(y), want)
    del tt  # y keeps the memory alive
    torch.cuda.synchronize()
    _equal(_down(y).astype(np.float32) if name == "bfloat16" else _down(y), want)


def test_dlpack_cupy(gpu: Device) -> None:
    cupy = pytest.importorskip("cupy")
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = _up(host, gpu)
    c = cupy.from_dlpack(x)
    assert c.data.ptr == address(x)
    np.testing.assert_array_equal(cupy.asnumpy(c), host)
    c *= 2
    cupy.cuda.runtime.deviceSynchronize()
    _equal(_down(x), host * 2)
    # (CuPy 14 exports negative strides wrongly, as unsigned byte strides / itemsize.)
    cc = cupy.arange(20, dtype=cupy.int16).reshape(4, 5)[1:, ::2]
    y = import_dlpack(cc)
    assert y.strides == (5, 2) and address(y) == cc.data.ptr
    _equal(_down(y), np.arange(20, dtype=np.int16).reshape(4, 5)[1:, ::2])
    z = import_dlpack(cc, copy=True)
    assert address(z) != cc.data.ptr
    _equal(_down(z), np.arange(20, dtype=np.int16).reshape(4, 5)[1:, ::2])
