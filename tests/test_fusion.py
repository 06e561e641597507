"""Deferred elementwise results and their fused kernels (``rocm_array.fusion``).

On each GPU (the simulator in CI): chains run as one generated kernel with the eager kernels'
bits, writes and DLPack never let a result see a later write, limits and threads hold. Without
a GPU: the switch, and over a recording driver with NVRTC, that a chain is one launch of one
generated kernel, whose operations are not contracted into one another.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
import threading
import warnings
import weakref
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import rocm_array as xp
from rocm_array import dtypes, fusion, memory
from rocm_array.devices import Device
from rocm_array.runtime import buffer
from rocm_array.runtime.buffer import SHARED, DeviceBuffer
from rocm_array.runtime.compiler import Compiler, kernel_headers
from rocm_array_plugins.elementwise import deferred, fused
from rocm_array_plugins.elementwise.table import BY_NAME

from helpers import host, small_values, storage

GPUS = [str(d) for d in xp.__array_namespace_info__().devices() if str(d).startswith("gpu")]


@pytest.fixture(params=GPUS or ["none"])
def gpu(request: pytest.FixtureRequest) -> str:
    if request.param == "none":
        pytest.skip("no GPU")
    return str(request.param)



def deferred_(x: xp.Array) -> bool:
    return isinstance(x._buf, deferred.Pending) and x._buf.node is not None


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(np.atleast_1d(a).view(np.uint8),
                                                                        np.atleast_1d(b).view(np.uint8))


def both(f: Callable[[], xp.Array]) -> tuple[xp.Array, np.ndarray]:
    """``f()`` with fusion (the deferred result) and its eager result's elements."""
    with fusion.eager():
        eager = host(f())
    return f(), eager


def put(a: np.ndarray, gpu: str) -> xp.Array:
    return xp.asarray(a, device=gpu)


# -- on a GPU --------------------------------------------------------------------------------------
def _float_chain(x: xp.Array, y: xp.Array) -> xp.Array:
    return xp.exp(-x * x) * 0.5 + xp.sin(x) - y / 3


def _int_chain(x: xp.Array, y: xp.Array) -> xp.Array:
    return ((x * 3 + y) ^ x) - (y << 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "complex128",
                                   "int32", "uint8", "int64"])
def test_a_chain_is_deferred_and_computed_with_the_eager_bits(gpu: str, fusing: None, dtype: str) -> None:
    rng = np.random.default_rng(1)
    n = 100003  # odd: a vector part and a tail
    if dtype.startswith(("int", "uint")):
        a, b = (rng.integers(0, 50, n).astype(dtype) for _ in range(2))
        chain = _int_chain
    else:
        a, b = (rng.standard_normal(n).astype(storage(dtype)) for _ in range(2))
        if dtype.startswith("complex"):
            a = a + 1j * rng.standard_normal(n).astype(a.dtype)
        chain = _float_chain
    x, y = put(a, gpu), put(b, gpu)
    result, eager = both(lambda: chain(x, y))
    assert deferred_(result) and result._buf.node.count >= 5
    assert same_bits(host(result), eager)


def test_scalars_casts_comparisons_and_shared_operations(gpu: str, fusing: None) -> None:
    i = put(small_values("int8", (1000,)), gpu)
    f = put(small_values("float32", (1000,), 1), gpu)
    h = put(small_values("float16", (1000,), 2), gpu)
    cases = [
        lambda: (2.5 - i) * f + i,                        # a scalar first; int8 cast to float32
        lambda: xp.logical_and(f > i, h <= 0.5) ^ (i == 1),  # comparisons, bool operations
        lambda: i / (i + 3),                               # integers divide in float64
        lambda: (t := f * f + 1) * t - xp.sqrt(t),         # a shared operation
        lambda: xp.abs(h * h - f),                         # float16 with float32: float32
        lambda: xp.nextafter(h * 2, h),                    # a row that steps in float16 itself
    ]
    for case in cases:
        result, eager = both(case)
        assert deferred_(result)
        assert same_bits(host(result), eager)


# Rows of every kind: arithmetic, transcendental, rounding, comparisons, logic, bitwise, complex parts.
_ROWS = [("add", "float32"), ("subtract", "int16"), ("multiply", "complex64"), ("divide", "float64"),
         ("floor_divide", "int32"), ("remainder", "float32"), ("pow", "float32"), ("pow", "int64"),
         ("hypot", "float32"), ("atan2", "float64"), ("logaddexp", "float32"), ("copysign", "float32"),
         ("maximum", "float32"), ("minimum", "uint16"), ("exp", "complex128"), ("log1p", "float32"),
         ("expm1", "float64"), ("tanh", "float16"), ("sqrt", "complex64"), ("round", "float32"),
         ("floor", "bfloat16"), ("trunc", "float64"), ("sign", "complex64"), ("abs", "complex128"),
         ("real", "complex64"), ("conj", "complex128"), ("isnan", "float32"), ("signbit", "float64"),
         ("less", "int64"), ("not_equal", "complex64"), ("logical_xor", "bool"), ("bitwise_and", "uint32"),
         ("bitwise_right_shift", "int16"), ("bitwise_invert", "int8"), ("square", "float32"),
         ("reciprocal", "float32"), ("negative", "int64"), ("positive", "uint8")]


@pytest.mark.parametrize("name,dtype", _ROWS, ids=[f"{n}-{d}" for n, d in _ROWS])
def test_a_row_fused_gives_its_eager_bits(gpu: str, fusing: None, name: str, dtype: str) -> None:
    """Each row after another operation (the positive, or for bool the not, of its operands): one
    generated kernel."""
    fn = BY_NAME[name]
    before = xp.logical_not if dtype == "bool" else xp.positive
    vals = [small_values(dtype, (513,), seed) for seed in range(fn.arity)]
    if dtype.startswith(("float", "bfloat", "complex")):  # special values too
        vals[0][:4] = np.array([0.0, -0.0, np.inf, np.nan]).astype(vals[0].dtype)
    args = [put(v, gpu) for v in vals]
    result, eager = both(lambda: fn(*(before(a) for a in args)))
    assert deferred_(result)
    assert same_bits(host(result), eager)


def test_a_write_never_reaches_a_deferred_result(gpu: str, fusing: None) -> None:
    a = np.arange(10, dtype=np.float32)
    x = put(a, gpu)
    y = x * 2 + 1
    z = xp.sqrt(x) * x
    assert deferred_(y) and deferred_(z)
    x[0] = 100  # an in-place write: what reads x is computed first, from x as it was (y reads
    assert not deferred_(z)  # x only through x * 2, which is computed: y may stay deferred over it)
    x += 1
    w = x * 2 + 1
    x[...] = 0
    np.testing.assert_array_equal(host(y), a * 2 + 1)
    np.testing.assert_array_equal(host(z), np.sqrt(a) * a)
    expected = a + 1
    expected[0] = 101
    np.testing.assert_array_equal(host(w), expected * 2 + 1)


def test_parts_of_a_deferred_result_are_read_as_arrays(gpu: str, fusing: None) -> None:
    """An element or a slice of a deferred result is computed and read at its place, never taken
    for the whole expression (array-api-tests' diff found an element view taken for element 0)."""
    x = put(np.array([1, 0, 0, 5], np.uint8), gpu)
    d = x[1:] - x[:-1]  # offset views of one buffer: deferred
    assert deferred_(d)
    assert bool(d[1] == (x[2] - x[1])) and bool(d[2] == x[3] - x[2])
    np.testing.assert_array_equal(host(d[1:] + 1), np.array([0, 5], np.uint8) + 1)
    e = x * 2
    np.testing.assert_array_equal(host(e[2:] - e[:2]), np.array([254, 10], np.uint8))  # (uint8 wraps)


@pytest.mark.parametrize("compiled", [True, False], ids=["fused", "one_by_one"])
def test_a_reshaped_deferred_result_as_an_operand(gpu: str, fusing: None, monkeypatch: pytest.MonkeyPatch,
                                                  compiled: bool) -> None:
    """A reshaped view of a deferred result is an operand of its consumer's shape, also when the
    operations run one by one (a kernel still compiling): scikit-learn's LDA and Cubed's std failed
    on an H100 with "cannot broadcast shape (200, 1) to (200,)"."""
    if not compiled:
        monkeypatch.setattr(deferred, "generated", lambda *args: None)
        monkeypatch.setattr(deferred, "_READY", {})  # (the fused case's kernel is not looked up)
    a = np.linspace(-2, 2, 200)
    x = put(a, gpu)
    column = xp.exp(xp.reshape(x, (200, 1)) * 2.0)  # deferred, shape (200, 1)
    y = xp.reshape(column, (200,)) + x
    assert deferred_(y) and y._buf.node.args[0].shape == (200, 1)
    np.testing.assert_allclose(host(y), np.exp(a * 2.0) + a, rtol=1e-15)


def test_a_deferred_result_written_in_place(gpu: str, fusing: None) -> None:
    x = put(np.arange(6, dtype=np.float64), gpu)
    y = x * 2 + 1
    v = y[::2]  # a view of a deferred result: computing it computes y
    y += 1
    y[1] = -1
    np.testing.assert_array_equal(host(y), [2, -1, 6, 8, 10, 12])
    np.testing.assert_array_equal(host(v), [2, 6, 10])


def test_memory_shared_through_dlpack_is_never_read_lazily(gpu: str, fusing: None) -> None:
    x = put(np.arange(8, dtype=np.float32), gpu)
    t = x * 2
    y = t + 1
    capsule = x.__dlpack__(stream=-1)  # a consumer may write x from now on: what reads x is
    assert capsule is not None and not deferred_(t)  # computed (y reads t's memory)
    np.testing.assert_array_equal(host(y), np.arange(8) * 2 + 1)
    assert x._buf.readers is SHARED
    assert isinstance((x * 3)._buf, DeviceBuffer)  # an operation reading x runs at once
    z = x * 3 + 1  # (the addition reads only the product, which no one else has: deferred)
    np.testing.assert_array_equal(host(z), np.arange(8) * 3 + 1)


def test_limits_bound_operations_and_arrays(gpu: str, fusing: None) -> None:
    a = np.linspace(0, 1, 300, dtype=np.float32)
    x = put(a, gpu)
    y, ref = x, a
    for _ in range(60):
        y = y * np.float32(0.5) + x
        ref = ref * np.float32(0.5) + a
    assert deferred_(y) and y._buf.node.count <= deferred.MAX_NODES
    np.testing.assert_array_equal(host(y), ref)
    arrays = [put(a + k, gpu) for k in range(3 * deferred.MAX_READS)]
    total = arrays[0] * 1
    for b in arrays[1:]:
        total = total + b
    assert len(total._buf.node.leaves) <= deferred.MAX_READS
    np.testing.assert_allclose(host(total), sum(a + k for k in range(3 * deferred.MAX_READS)), rtol=1e-6)


@pytest.mark.parametrize("n", [1000, 100003, (1 << 20) + 7])  # one pass; a folded full reduction
def test_a_reduction_computes_the_expression_in_its_own_kernel(gpu: str, fusing: None, n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = (put(rng.standard_normal(n).astype(np.float32), gpu) for _ in range(2))
    m = put(rng.standard_normal((64, n // 64)).astype(np.float64), gpu)
    cases: list[Callable[[], xp.Array]] = [
        lambda: xp.sum(xp.exp(x) * y),
        lambda: xp.max(xp.abs(x - y)),
        lambda: xp.argmax(x * y + 1),
        lambda: xp.mean(m * m - 1, axis=1),            # rows: two passes
        lambda: xp.var(xp.sin(m) + m, axis=(0, 1), correction=1),
        lambda: xp.sum(xp.reshape(x[: 64 * (n // 64)] * 2 + y[: 64 * (n // 64)], (64, -1)), axis=-1),
        lambda: xp.sum(xp.exp(-x * x) * 0.5 + xp.sin(x)),  # x read three times, loaded once
        lambda: xp.sum(x[1:] * x[1:] - x[:-1]),        # views off their vector boundary; two arrays
    ]
    for case in cases:
        with fusion.eager():
            eager = host(case())
        assert same_bits(host(case()), eager)
    z = xp.exp(x) * y
    xp.sum(z)
    assert deferred_(z)  # the expression was computed inside the reduction, never stored


def test_broadcast_operands_and_a_softmax(gpu: str, fusing: None) -> None:
    rng = np.random.default_rng(5)
    m = put(rng.standard_normal((300, 257)).astype(np.float32), gpu)
    row = put(rng.standard_normal(257).astype(np.float32), gpu)
    col = put(rng.standard_normal((300, 1)).astype(np.float32), gpu)
    one = put(np.float32(2.5), gpu)
    for case in (lambda: (m + row) * col - one, lambda: xp.exp(m - xp.max(m, axis=-1, keepdims=True))):
        result, eager = both(case)
        assert deferred_(result)
        assert same_bits(host(result), eager)

    def softmax(x: xp.Array) -> xp.Array:  # plain xp calls: the numerator's sum computes it in its own kernel
        e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return e / xp.sum(e, axis=-1, keepdims=True)

    result, eager = both(lambda: softmax(m))
    assert deferred_(result)
    assert same_bits(host(result), eager)


def test_operands_of_other_layouts_run_eagerly(gpu: str, fusing: None) -> None:
    m = put(np.arange(12, dtype=np.float32).reshape(3, 4), gpu)
    for r in (m.T * 2, m[:, ::2] + 1, m[:, ::2] * m[:, 1::2]):
        assert isinstance(r._buf, DeviceBuffer)  # strided views: the eager kernels
    np.testing.assert_array_equal(host(m.T * 2), np.arange(12).reshape(3, 4).T * 2)


def test_eager_blocks_and_the_switch(gpu: str, fusing: None) -> None:
    x = put(np.ones(5, np.float32), gpu)
    with fusion.eager():
        assert isinstance((x + 1)._buf, DeviceBuffer)
        with fusion.eager():
            pass
        assert isinstance((x + 1)._buf, DeviceBuffer)  # still eager after the inner block
    assert deferred_(x + 1)
    fusion.set_enabled(False)
    assert isinstance((x + 1)._buf, DeviceBuffer)


def test_threads_compute_a_result_once(gpu: str, fusing: None) -> None:
    x = put(np.arange(4096, dtype=np.float32), gpu)
    y = xp.cos(x) * x + 1
    seen: list[Any] = []

    def read() -> None:
        seen.append((y._buf.force(), host(y)))

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(buf) for buf, _ in seen}) == 1
    with fusion.eager():
        expected = host(xp.cos(x) * x + 1)
    assert all(same_bits(values, expected) for _, values in seen)


def test_threads_writing_in_place_never_reach_lone_results(gpu: str, fusing: None) -> None:
    """Lone results wait unregistered (``buffer.UNSETTLED``) while threads write arrays in place: a
    write settles every thread's, so each result still reads the values it was given."""
    wrong: list[tuple[int, int]] = []

    def work(k: int) -> None:
        x = put(np.full(256, k, np.float32), gpu)
        for i in range(40):
            t = x + 1.0
            u = x * 2.0
            x += 1.0
            if not (np.all(host(t) == k + i + 1) and np.all(host(u) == 2 * (k + i))):
                wrong.append((k, i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_a_new_shape_runs_eagerly_while_its_kernel_compiles(gpu: str, fusing: None, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deferred, "COMPILE_IN_BACKGROUND", True)
    x = put(small_values("uint16", (2000,)), gpu)
    rt = x.device.runtime
    old = rt.compiler  # an empty disk cache: the kernel is new however often the suite has run
    monkeypatch.setattr(rt, "compiler", Compiler(old.rtc, old.arch, old.wave_size, tmp_path))

    def chain() -> xp.Array:  # a shape no other test builds
        return ((x | 5) * x) >> 2

    first = chain()
    struct = first._buf.node.source()
    source = fused.prelude() + struct
    key = (rt, fused.PATH, fused.KERNEL, struct)
    monkeypatch.delitem(deferred._KERNELS, key, raising=False)  # (loaded by an earlier run in this process)
    monkeypatch.delitem(deferred._READY, (rt, first._buf.node.key), raising=False)
    assert not rt.compiler.cached(fused.PATH, [fused.KERNEL], fused.FUSED.options_on(x.device), source)
    values = host(first)  # eager, and the kernel compiles on a thread
    found = deferred._KERNELS[key]
    found.result(timeout=600)
    second = chain()
    np.testing.assert_array_equal(host(second), values)
    assert not hasattr(deferred._KERNELS[key], "result")  # the loaded kernel ran


def test_a_loop_compiles_one_kernel_per_expression_shape(gpu: str, fusing: None) -> None:
    x = put(np.ones(100, np.float32), gpu)
    before = len(deferred._KERNELS)
    for k in range(5):
        host(xp.tanh(x * float(k)) + x)  # other values, one shape
    assert len(deferred._KERNELS) == before + 1


# -- without a GPU ---------------------------------------------------------------------------------
def test_the_switch() -> None:
    was = fusion.enabled()
    try:
        fusion.set_enabled(True)
        assert fusion.active() and fusion.state.defer is True
        with fusion.eager():
            assert fusion.enabled() and not fusion.active()
            assert fusion.state.defer is None  # (a block is open somewhere: the lanes ask active())
            other: list[bool] = []
            t = threading.Thread(target=lambda: other.append(fusion.active()))
            t.start()
            t.join()
            assert other == [True]  # eager() is this thread's
        assert fusion.active() and fusion.state.defer is True
        fusion.set_enabled(False)
        assert not fusion.active() and fusion.state.defer is False
    finally:
        fusion.set_enabled(was)


def test_the_switch_comes_from_the_environment() -> None:
    code = "import rocm_array.fusion as f; print(f.enabled())"
    for value, expected in (("1", "True"), ("0", "False"), (None, "True")):
        env = {k: v for k, v in __import__("os").environ.items() if k != fusion.FUSION_VAR}
        if value is not None:
            env[fusion.FUSION_VAR] = value
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        assert out.stdout.strip() == expected, out.stderr



def test_a_chain_is_one_launch_of_one_generated_kernel(recording: Device) -> None:
    x = memory.empty((1 << 20,), dtypes.float32, recording)
    launches = recording.runtime.driver.launches
    y = xp.exp(-x * x) * 0.5 + xp.sin(x)
    assert launches == [] and deferred_(y)  # five operations, nothing run yet
    y._buf.ptr  # its address is needed (by any other kernel, a copy, DLPack, printing...)
    [launch] = launches
    assert "fused_contiguous" in launch[0] and "RaFused" in launch[0]


def test_a_chain_past_its_limit_computes_only_its_largest_operand(recording: Device) -> None:
    """axpy_loop's chain: y = x * 0.5 + y. Its 13th addition would hold 25 operations: the 24 of y
    so far run as one generated kernel, and the lone x * 0.5 stays deferred inside the next chain
    (it had run its own kernel too). Each operation keeps its parts, no tree (Pending.count)."""
    x, y = (memory.empty((4096,), dtypes.float32, recording) for _ in range(2))
    launches = recording.runtime.driver.launches
    for _ in range(12):
        y = x * 0.5 + y
    assert launches == [] and y._buf.count == deferred.MAX_NODES
    y = x * 0.5 + y
    [launch] = launches
    assert "RaFused" in launch[0] and y._buf.count == 2 and deferred_(y)
    fusion.compute(y)
    assert len(launches) == 2 and "RaFused" in launches[1][0]


def test_a_lane_whose_results_are_computed_alone_runs_eagerly(recording: Device,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deferred, "LONE_STREAK", 4)
    monkeypatch.setattr(deferred, "LONE_SAMPLE", 8)
    a, b = (memory.empty((16,), dtypes.float32, recording) for _ in range(2))

    def waiting(x: xp.Array) -> bool:  # (deferred_ asks for the node: an extension)
        return isinstance(x._buf, deferred.Pending) and x._buf._real is None

    for _ in range(4):  # deferred, then computed alone
        c = a + b
        assert waiting(c)
        fusion.compute(c)
    kinds = [waiting(fusion.compute(a + b)) for _ in range(16)]
    assert kinds == [False] * 16  # eager, computed at once...
    samples = [waiting(a + b) for _ in range(16)]
    assert samples.count(True) == 2  # ...but one call in 8
    d = a + b
    while not waiting(d):
        d = a + b
    e = d * 2  # extended: the lane defers again
    assert deferred_(e) and all(waiting(a + b) for _ in range(8))
    for _ in range(8):  # the lane gone eager again...
        fusion.compute(a + b)
    y = a * 0.5
    for _ in range(4):  # ...still extends a chain ending in it (a loop y = a * 0.5 + y)
        y = a * 0.5 + y
    assert deferred_(y) and y._buf.node.count == 9


@pytest.mark.parametrize("form", ["a + b", "a * 0.5", "0.5 * a", "-a", "affine"])
def test_a_lanes_lone_result_is_the_pending_fill_would_build(recording: Device, form: str) -> None:
    """A lane builds its lone deferred result in line (gpu_lanes._TEMPLATE): every field that
    ``Pending.fill`` sets is set, to what it would set, and the result waits in ``buffer.UNSETTLED``
    (``memory.before_write`` settles it, then finds it among its operands' readers)."""
    buffer.settle()  # (earlier tests' results would fill it to SETTLE_AT, which settles this one too)
    a, b = (memory.empty((16,), dtypes.float32, recording) for _ in range(2))
    op = {"a + b": lambda: a + b, "a * 0.5": lambda: a * 0.5, "0.5 * a": lambda: 0.5 * a, "-a": lambda: -a,
          "affine": lambda: xp.nn.affine(a, 1.5, -0.25)}[form]
    op()  # (the first call makes the lane; the second takes it)
    got = op()._buf
    assert type(got) is deferred.Pending
    fn, dtype, out_dtype, operands, shape, params = got._parts
    built = deferred.Pending()
    built.fill(recording, 64, got._parts, 1, sum(o is a or o is b for o in operands), got.eager, got.eager_args,
               got.lone)
    slots = {s for t in type(got).__mro__ for s in getattr(t, "__slots__", ()) if s != "__weakref__"}
    assert {s: getattr(got, s) for s in slots} == {s: getattr(built, s) for s in slots}
    assert (shape, params) == ((16,), (1.5, -0.25) if form == "affine" else ())
    assert got in buffer.UNSETTLED and not any(ref() is got for ref in a._buf.readers or ())
    memory.before_write(a)
    assert got._real is not None and got._parts is None and not buffer.UNSETTLED


def test_a_lone_result_computed_at_once_never_joins_its_operands_readers(recording: Device) -> None:
    """The cheap path of a deferred ``a + b`` read at once: its lane puts it in ``buffer.UNSETTLED``
    and computing it takes it out, with no weak reference and no reader list made."""
    buffer.settle()
    a, b = (memory.empty((16,), dtypes.float32, recording) for _ in range(2))
    a + b  # (the lane; this first call, the front's, registers its result)
    readers = [list(x._buf.readers or ()) for x in (a, b)]
    for _ in range(3 * buffer.SETTLE_AT):
        r = a + b
        assert r._buf in buffer.UNSETTLED
        fusion.compute(r)
        assert not buffer.UNSETTLED
    assert [list(x._buf.readers or ()) for x in (a, b)] == readers


def test_a_lone_result_computed_on_two_threads_keeps_the_launch_before_a_write(recording: Device) -> None:
    """A lone result is computed without the compute lock. Thread A reads its launch, and is held
    before queuing it; thread B writes an operand in place, which settles the result and computes it
    (B's launch), then writes. A's launch comes after the write, so A must keep B's buffer."""
    from helpers import read_argument

    a, b = (memory.empty((16,), dtypes.float32, recording) for _ in range(2))
    fusion.compute(a + b)  # (the lane)
    r = a + b
    pending = r._buf
    launch, held, go = pending.eager, threading.Event(), threading.Event()
    assert launch is not None and pending in buffer.UNSETTLED

    def held_launch(*args: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            held.set()
            go.wait(30)
        return launch(*args)

    pending.eager = held_launch
    got: list[Any] = []
    other = threading.Thread(target=lambda: got.append(pending.force()))
    other.start()
    assert held.wait(30)
    launches = recording.runtime.driver.launches
    launches.clear()
    memory.before_write(a)  # B: the write settles r, and computes it first
    kept = pending._real
    assert kept is not None and len(launches) == 1
    assert read_argument(launches[0][4], 0, ctypes.c_void_p).value == kept.ptr
    go.set()  # A queues its launch, after the write
    other.join(30)
    assert got == [kept] and pending._real is kept and len(launches) == 2
    assert pending not in buffer.UNSETTLED and pending.eager is None and pending._parts is None


def test_unsettled_results_go_with_their_chain_or_are_settled_at_settle_at(recording: Device) -> None:
    """A lone result waits in ``buffer.UNSETTLED``. Extended, it goes when the expression that extends
    it is computed, unless something else holds it. ``SETTLE_AT`` of them settle: one still held joins
    its operands' readers, and one nothing holds is dropped, letting the arrays it read go."""
    a = memory.empty((16,), dtypes.float32, recording)
    a * 0.5  # (the lane: this first call, the front's, registers its result)
    buffer.settle()
    chain = a * 0.5 + a
    inner = weakref.ref(chain._buf._parts[3][0]._buf)
    assert inner() in buffer.UNSETTLED
    fusion.compute(chain)
    assert inner() is None and not buffer.UNSETTLED
    held = a * 3.0
    fusion.compute(held + a)
    dropped = memory.empty((16,), dtypes.float32, recording)
    gone = weakref.ref(dropped._buf)
    dropped * 2.0
    del dropped
    assert gone() is not None and list(buffer.UNSETTLED)[0] is held._buf and len(buffer.UNSETTLED) == 2
    while buffer.UNSETTLED:
        a * 4.0
    assert gone() is None and any(ref() is held._buf for ref in a._buf.readers)
    memory.before_write(a)  # (what reads a is computed before a is written)
    assert held._buf._real is not None


def test_an_allocation_that_finds_the_device_full_sweeps_first(recording: Device,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Deferred results dropped uncomputed hold the arrays they read until they are swept: a device
    found full sweeps them before it collects garbage and tries again."""
    from rocm_array.runtime.protocol import DriverOutOfMemory

    x = memory.empty((1 << 16,), dtypes.float32, recording)
    x * 2.0  # (the lane: this first call, the front's, registers its result)
    buffer.settle()
    gone = weakref.ref(x._buf)
    x * 2.0
    del x
    rt = recording.runtime
    malloc = rt.driver.malloc_async

    def full_once(nbytes: int) -> int:
        monkeypatch.setattr(rt.driver, "malloc_async", malloc)
        raise DriverOutOfMemory("full")

    monkeypatch.setattr(rt.driver, "malloc_async", full_once)
    assert gone() is not None
    memory.empty((1 << 20,), dtypes.float32, recording)
    assert gone() is None and not buffer.UNSETTLED


def test_an_array_read_several_times_is_loaded_once(recording: Device) -> None:
    x, y = (memory.empty((1 << 10,), dtypes.float32, recording) for _ in range(2))
    chain = xp.exp(-x * x) * 0.5 + xp.sin(x) - y * x
    loads = re.search(r"struct Loads \{(.*?)\}", chain._buf.node.source())
    assert loads is not None and loads.group(1).split() == ["ra_vec<float,", "4>", "a0;", "ra_vec<float,", "4>", "a3;"]  # x, y
    views = x[1:] * x[:-1]  # one buffer, two offsets: two arrays
    assert views._buf.node.key[1] is None


def test_a_chain_ending_in_a_sum_is_one_launch(recording: Device) -> None:
    x, y = (memory.empty((1 << 20,), dtypes.float32, recording) for _ in range(2))
    xp.sum(x * y)  # (the first fused full reduction of a device makes its counter of finished blocks)
    launches = recording.runtime.driver.launches
    launches.clear()
    z = xp.exp(x) * y
    s = xp.sum(z)
    [launch] = launches
    assert "reduce_all_of" in launch[0] and "RaComputed" in launch[0]
    assert deferred_(z) and isinstance(s._buf, DeviceBuffer)


def test_a_reduction_reaches_expressions_only_through_the_core(recording: Device,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The reduction plugin fuses what ``fusion.expressions()`` gives it: with no provider there, it
    reads a deferred result as an array, computed first (and an ordinary array as ever)."""
    x, y = (memory.empty((1 << 20,), dtypes.float32, recording) for _ in range(2))
    xp.sum(x)  # (a device's first full reduction makes its counter of finished blocks)
    monkeypatch.setattr(fusion, "expressions", lambda: None)
    launches = recording.runtime.driver.launches
    launches.clear()
    z = xp.exp(x) * y
    xp.sum(z)
    xp.sum(x)
    assert [("fused" in launch[0], "reduce_all" in launch[0], "RaComputed" in launch[0]) for launch in launches] == [
        (True, False, False), (False, True, False), (False, True, False)]
    assert not deferred_(z)  # computed by its own kernel, then read


def test_an_operation_alone_runs_its_lanes_eager_kernel(recording: Device) -> None:
    """A deferred operation on arrays keeps its lane's launch, and no tree is built unless another
    operation extends it: computed alone, it is that launch (the general ufunc path, and the
    node, cost a tiny op 23 against 8 us on an H100)."""
    x = memory.empty((16,), dtypes.float32, recording)
    ops = (lambda: x + x, lambda: x * 2.0, lambda: 2.0 - x, lambda: -x)
    for op in ops:
        fusion.compute(op())  # (a first call resolves the operands' lane)
    launches = recording.runtime.driver.launches
    launches.clear()
    for y in (op() for op in ops):
        assert type(y._buf) is deferred.Pending and y._buf.eager is not None and y._buf.count == 1
        fusion.compute(y)
        assert y._buf._parts is None and y._buf.node is None  # computed: nothing kept
    assert len(launches) == 4 and all("_contiguous" in launch[0] and "fused" not in launch[0] for launch in launches)
    y = x + x
    z = y * x  # extends y: z is an expression of two operations
    assert z._buf.eager is None and z._buf.count == 2 and z._buf.node.count == 2
    fusion.compute(z)
    assert "fused" in launches[-1][0] and y._buf._real is None  # (y itself is still deferred)


def test_the_benchmarks_time_a_deferred_result_computed(recording: Device) -> None:
    """The harness's rocm_array calls end with their results computed (fusion is on by default: an
    uncomputed chain would time nothing)."""
    benchmarks = pytest.importorskip("benchmarks.libs", reason="run from the checkout (benchmarks/)")
    x = memory.empty((1 << 20,), dtypes.float32, recording)
    launches = recording.runtime.driver.launches
    y = xp.exp(x) * 2.0
    assert launches == []
    assert benchmarks.LIBRARIES["rocm_array"].finish((y, 1)) == (y, 1)
    assert len(launches) == 1 and y._buf._real is not None  # one fused kernel, its memory now real


def test_a_kernel_that_does_not_compile_falls_back_once_and_says_why(recording: Device,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fused, "prelude", lambda: "#error a broken prelude\n")
    x = memory.empty((1000,), dtypes.float32, recording)
    launches = recording.runtime.driver.launches
    with pytest.warns(fusion.FusionFallbackWarning, match="a broken prelude"):
        (xp.exp(x) * 2.0 + x)._buf.ptr
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once
        (xp.exp(x) * 2.0 + x)._buf.ptr
    assert len(launches) == 6 and all("fused" not in launch[0] for launch in launches)  # three eager kernels twice


def _ptx(source: str) -> str:
    from cuda.bindings import nvrtc

    headers = kernel_headers()
    _, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"fused.hip", len(headers),
                                       [h.encode() for h in headers.values()], [n.encode() for n in headers])
    nvrtc.nvrtcAddNameExpression(prog, fused.KERNEL.encode())
    options = [b"--gpu-architecture=compute_90", b"-std=c++17", b"-DRA_WAVE_SIZE=32"]
    (status,) = nvrtc.nvrtcCompileProgram(prog, len(options), options)
    assert status == nvrtc.nvrtcResult.NVRTC_SUCCESS
    _, size = nvrtc.nvrtcGetPTXSize(prog)
    buf = b" " * size
    nvrtc.nvrtcGetPTX(prog, buf)
    return buf.decode()


def test_operations_are_not_contracted_into_one_another(recording: Device) -> None:
    """``x * 2 + y`` keeps its multiply and add (an fma would round once where the eager kernels
    round twice): both rounded once (mul.rn, add.rn), with no fence; with plain ``*`` and ``+``
    NVRTC contracts them."""
    x, y = (memory.empty((64,), dtypes.float32, recording) for _ in range(2))
    text = fused.kernel((x * 2.0 + y)._buf.node.sig).source
    assert "ra_fence(" not in text
    source = fused.prelude() + text
    fma = re.compile(r"\bfma\.rn\.f32\b")
    ptx = _ptx(source)
    assert not fma.search(ptx) and re.search(r"\bmul\.rn\.f32\b", ptx) and re.search(r"\badd\.rn\.f32\b", ptx)
    plain = source.replace("return __fmul_rn(a, b);", "return a * b;").replace("return __fadd_rn(a, b);", "return a + b;")
    assert plain != source and fma.search(_ptx(plain))


def test_a_fence_stands_where_two_operations_could_contract(recording: Device) -> None:
    """A result is fenced only where its consumer could take it into an fma: a square (a product)
    into logaddexp (whose subtraction could absorb it) is; exp's result into a rounded multiply,
    and the rounded multiply into a rounded add, are not."""
    x, y = (memory.empty((64,), dtypes.float32, recording) for _ in range(2))
    text = fused.kernel((xp.logaddexp(xp.square(x), y))._buf.node.sig).source
    assert "ra_fence(RaUnary<square_op, float, float>()" in text
    text = fused.kernel((xp.exp(x) * 2.0 + y)._buf.node.sig).source
    assert "ra_fence(" not in text and "RaUnary<exp_op, float, float>()(a0)" in text
    assert "ra_mul_rn(" in text and "ra_add_rn(" in text


# -- across a reduction: row kernels (rows.py) ------------------------------------------------------
def _softmax(x: xp.Array) -> xp.Array:
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def _layer_norm(x: xp.Array) -> xp.Array:
    return (x - xp.mean(x, axis=-1, keepdims=True)) / xp.sqrt(xp.var(x, axis=-1, keepdims=True) + 1e-5)


def _centered(x: xp.Array) -> xp.Array:
    return x - xp.mean(x, axis=-1, keepdims=True)


def _softmax_flat(x: xp.Array) -> xp.Array:  # keepdims=False, the axis put back
    e = xp.exp(x - xp.expand_dims(xp.max(x, axis=-1), axis=-1))
    return e / xp.expand_dims(xp.sum(e, axis=-1), axis=-1)


def _std_scaled(x: xp.Array) -> xp.Array:  # a stage of an expression, another of the array, a correction
    return (x * 2 - xp.min(x, axis=-1, keepdims=True)) * xp.std(x * 2, axis=-1, keepdims=True, correction=1)


@pytest.fixture
def row_kernels(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The row kernels computed (each computation's elements), counted."""
    from rocm_array_plugins.elementwise import rows

    done: list[int] = []
    evaluate = rows.evaluate

    def counted(node: fused.Node, *args: Any) -> Any:
        buf = evaluate(node, *args)
        if buf is not None:
            done.append(int(np.prod(node.shape)))
        return buf

    monkeypatch.setattr(rows, "evaluate", counted)
    return done


def _rows_data(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(storage(dtype))


@pytest.mark.parametrize("dtype, shape", [("float32", (300, 257)), ("float32", (7, 5, 100)), ("float32", (1000,)),
                                          ("float32", (9, 1)), ("float64", (64, 1024)), ("float64", (3, 333)),
                                          ("float16", (20, 4096))])
def test_softmax_and_layer_norm_are_one_row_kernel_with_the_eager_bits(gpu: str, fusing: None, row_kernels: list[int],
                                                                       dtype: str, shape: tuple[int, ...]) -> None:
    x = put(_rows_data(dtype, shape), gpu)
    for case in (_softmax, _layer_norm, _centered, _softmax_flat, _std_scaled):
        row_kernels.clear()
        result, eager = both(lambda: case(x))
        assert same_bits(host(result), eager), case.__name__
        # The whole expression, one kernel; but rows of one element: x - mean(x) of one operation on arrays of
        # one shape is the lone operation's eager kernel (deferred.py), its mean by the reduction's.
        assert row_kernels == [x.size] or (case is _centered and shape[-1] == 1), case.__name__


@pytest.mark.parametrize("budget", [0, 32, 1 << 12])
def test_rows_held_in_registers_or_read_again_give_the_eager_bits(gpu: str, fusing: None, row_kernels: list[int],
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   budget: int) -> None:
    """rows.CACHE_REGISTERS: nothing held (each phase reads the rows again, in loops), x held and
    exp(x - max) computed again, or everything held; rows of 5 to 8 vectors a thread (groups of four
    and the rest), off a vector boundary (a head and a tail)."""
    from rocm_array_plugins.elementwise import rows

    monkeypatch.setattr(rows, "CACHE_REGISTERS", budget)
    monkeypatch.setattr(rows, "_READY", {})
    rows._program.cache_clear()
    try:
        for dtype, shape in (("float32", (6, 4099)), ("float64", (4, 2051))):
            x = put(_rows_data(dtype, shape), gpu)
            for case in (_softmax, _layer_norm, _std_scaled):
                row_kernels.clear()
                result, eager = both(lambda: case(x))
                assert same_bits(host(result), eager), (dtype, case.__name__)
                assert row_kernels == [x.size], (dtype, case.__name__)
    finally:
        rows._program.cache_clear()


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_rows(gpu: str, fusing: None, row_kernels: list[int], dtype: str) -> None:
    x = put(_rows_data(dtype, (50, 300)), gpu)
    for case in (lambda: x - xp.max(x, axis=-1, keepdims=True), lambda: x * xp.sum(x, axis=-1, keepdims=True),
                 lambda: (x > 3) & xp.any(x == 0, axis=-1, keepdims=True),  # bool results
                 lambda: x - xp.argmax(x, axis=-1, keepdims=True)):  # the map's index: the element's in the row
        row_kernels.clear()
        result, eager = both(case)
        assert same_bits(host(result), eager)
        assert row_kernels == [x.size]


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "bfloat16"])
def test_complex_and_bfloat16_rows(gpu: str, fusing: None, row_kernels: list[int], dtype: str) -> None:
    a = _rows_data("float64", (20, 300)) + (1j * _rows_data("float64", (20, 300), 1) if dtype.startswith("c") else 0)
    x = put(a.astype(storage(dtype)), gpu)
    for case in (lambda: x - xp.mean(x, axis=-1, keepdims=True), lambda: x * xp.sum(x, axis=-1, keepdims=True)):
        row_kernels.clear()
        result, eager = both(case)
        assert same_bits(host(result), eager)
        assert row_kernels == [x.size]


def test_rows_of_nan_and_inf(gpu: str, fusing: None, row_kernels: list[int]) -> None:
    a = _rows_data("float32", (6, 300))
    a[0, 5] = np.nan
    a[1, :] = np.inf
    a[2, 7] = -np.inf
    a[3, 299] = np.inf
    a[4, :] = -0.0
    x = put(a, gpu)
    for case in (_softmax, _layer_norm, _centered, lambda x: x - xp.sum(x, axis=-1, keepdims=True)):
        row_kernels.clear()
        result, eager = both(lambda: case(x))
        assert same_bits(host(result), eager)
        assert row_kernels == [x.size]


def test_row_lengths_at_and_past_the_limit(gpu: str, fusing: None, row_kernels: list[int]) -> None:
    from rocm_array_plugins.elementwise import rows

    longest = rows.ROW_BYTES // 8
    x = put(_rows_data("float64", (4096, longest)), gpu)  # (rows enough for a block each)
    result, eager = both(lambda: _softmax(x))
    assert same_bits(host(result), eager) and row_kernels == [x.size]
    row_kernels.clear()
    y = put(_rows_data("float64", (8, longest + 1)), gpu)
    m = xp.max(y, axis=-1, keepdims=True)
    assert not isinstance(m._buf, deferred.RowPending)  # past the limit: today's kernels
    result, eager = both(lambda: _softmax(y))
    assert same_bits(host(result), eager) and row_kernels == []


def test_a_deferred_reduction_read_itself_and_in_an_expression(gpu: str, fusing: None, row_kernels: list[int]) -> None:
    a = _rows_data("float32", (40, 500))
    x = put(a, gpu)
    with fusion.eager():
        m_eager, y_eager = host(xp.mean(x, axis=-1)), host(x - xp.mean(x, axis=-1, keepdims=True))
    m = xp.mean(x, axis=-1, keepdims=True)
    y = x - m
    assert isinstance(m._buf, deferred.RowPending)
    assert same_bits(host(y), y_eager) and row_kernels == [x.size]  # the expression first: m still deferred
    assert m._buf._real is None
    assert same_bits(host(m)[:, 0], m_eager)  # then m itself, by the reduction's kernels
    m = xp.mean(x, axis=-1, keepdims=True)
    y = x - m
    assert same_bits(host(m)[:, 0], m_eager)  # m first: the expression reads it as an array
    assert same_bits(host(y), y_eager)
    s = xp.sum(x, axis=-1)
    assert same_bits(host(s[3:5]), host(xp.sum(x, axis=-1))[3:5])  # indexing a deferred reduction


def test_a_write_in_place_before_a_row_kernel(gpu: str, fusing: None) -> None:
    a = _rows_data("float32", (30, 200))
    x = put(a, gpu)
    with fusion.eager():
        ref = host(_softmax(x))
    y = _softmax(x)
    m = xp.max(x, axis=-1, keepdims=True)
    x[...] = 0  # computes y and m first, from the values they were given
    assert same_bits(host(y), ref)
    assert same_bits(host(m)[:, 0], a.max(axis=-1))
    x = put(a, gpu)
    s = xp.sum(x, axis=-1, keepdims=True)
    x += 1
    np.testing.assert_array_equal(host(s)[:, 0], host(xp.sum(put(a, gpu), axis=-1)))


def test_rows_of_another_layout_or_reduction_run_as_before(gpu: str, fusing: None, row_kernels: list[int]) -> None:
    x = put(_rows_data("float32", (64, 300)), gpu)
    for case in (lambda: x - xp.max(x, axis=0, keepdims=True),     # another axis
                 lambda: x.T - xp.max(x.T, axis=-1, keepdims=True),  # a strided array
                 lambda: x[:, 1:] - xp.max(x[:, 1:], axis=-1, keepdims=True)):  # rows off a vector boundary
        row_kernels.clear()
        result, eager = both(case)
        assert same_bits(host(result), eager)
        assert row_kernels == []


def test_a_softmax_is_one_launch(recording: Device) -> None:
    x = memory.empty((512, 1024), dtypes.float32, recording)
    launches = recording.runtime.driver.launches
    launches.clear()
    y = _softmax(x)
    assert launches == [] and deferred_(y)
    y._buf.ptr
    [launch] = launches
    assert "fused_rows" in launch[0] and "RaRows" in launch[0]
    launches.clear()
    _layer_norm(x)._buf.ptr
    [launch] = launches
    assert "fused_rows" in launch[0]


def test_the_compile_check_builds_row_kernels() -> None:
    """CI's compile check (``python -m rocm_array compile-check``) builds row kernels of every kind
    (rows.examples: a softmax and a layer norm in rows held in registers and in rows read again, short
    rows of each reduction) for every kind of GPU."""
    from rocm_array_plugins.reduction import gpu as reduction_gpu

    built = [ks for ks in reduction_gpu.kernel_sources() if ks.source and "fused_rows<RaRows>" in ks.names]
    programs = {ks.source for ks in built}
    assert len(programs) == 8 and all("struct RaRows" in text and "ra_row_reduce" in text for text in programs)
    held = {("e1.put(" in text, "RaRowStream<" in text) for text in programs}  # (a kept input; an array read again)
    assert held >= {(True, False), (False, True)}
    assert {k for ks in built for k in ks.kinds} >= set(reduction_gpu.REDUCTION.kinds)
