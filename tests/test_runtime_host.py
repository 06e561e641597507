"""The GPU runtime's host-side machinery, over a recording driver (no GPU needed): the free lists
that make a small allocation cost no driver call, a buffer's release at exit, row-major strides,
the launcher's argument block, and what a driver made current on each thread."""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import Any

import pytest
from helpers import RecordingDriver, read_argument

from rocm_array import dtypes
from rocm_array.runtime import buffer, gpu, layout
from rocm_array.runtime.bindings import Current
from rocm_array.runtime.gpu import GpuRuntime
from rocm_array.runtime.launcher import launcher
from rocm_array.runtime.layout import ctype_of


@pytest.fixture
def runtime() -> GpuRuntime:
    return GpuRuntime(RecordingDriver())  # type: ignore[arg-type]


def test_small_blocks_are_reused_without_a_driver_call(runtime: GpuRuntime) -> None:
    d = runtime.driver
    a = runtime.allocate(100)
    ptr = a.ptr
    del a
    assert d.frees == []  # kept on its size's free list
    b = runtime.allocate(300)  # rounded to the same 512-byte size
    assert b.ptr == ptr and b.nbytes == 300 and d.mallocs == [512]
    c = runtime.allocate(1000)  # another size: a new block
    assert c.ptr != ptr and d.mallocs == [512, 1024]


def test_large_blocks_go_back_to_the_driver(runtime: GpuRuntime) -> None:
    d = runtime.driver
    big = runtime.allocate(gpu.MID_LIMIT + 1)
    ptr = big.ptr
    del big
    assert d.frees == [ptr] and d.mallocs == [gpu.MID_LIMIT + 1]


def test_mid_size_blocks_are_kept_by_size_class_up_to_a_total(runtime: GpuRuntime,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Past SMALL_LIMIT a block is rounded up to an eighth of its power of two and kept when freed,
    while the kept ones total at most MID_KEEP; more goes back to the pool, and release_memory
    gives all back."""
    d = runtime.driver
    a = runtime.allocate((3 << 20) + 1)  # 3 MiB and a byte: in the 3.25 MiB class (256 KiB steps)
    ptr = a.ptr
    del a
    assert d.frees == [] and d.mallocs == [13 << 18]
    b = runtime.allocate(3_355_443)  # 3.2 MiB: the same class
    assert b.ptr == ptr and b.nbytes == 3_355_443 and len(d.mallocs) == 1
    monkeypatch.setattr(gpu, "MID_KEEP", 4 << 20)
    c = runtime.allocate(2 << 20)
    kept, returned = b.ptr, c.ptr
    del b, c  # 3.25 MiB kept; 2 MiB more would pass 4 MiB: back to the pool
    assert d.frees == [returned]
    runtime.release_memory()
    assert d.frees == [returned, kept]


def test_blocks_freed_together_are_all_kept_for_reuse(runtime: GpuRuntime) -> None:
    d = runtime.driver
    blocks = [runtime.allocate(gpu.SMALL_LIMIT) for _ in range(5)]
    ptrs = {b.ptr for b in blocks}
    del blocks
    again = [runtime.allocate(gpu.SMALL_LIMIT) for _ in range(5)]
    assert {b.ptr for b in again} == ptrs and d.frees == [] and len(d.mallocs) == 5


def test_release_memory_and_out_of_memory_drain_the_free_lists(runtime: GpuRuntime) -> None:
    d = runtime.driver
    ptrs = set()
    for n in (64, 4096):
        x = runtime.allocate(n)
        ptrs.add(x.ptr)
        del x
    runtime.release_memory()
    assert set(d.frees) == ptrs
    kept = runtime.allocate(64)
    del kept
    d.frees.clear()
    d.fail = 1  # the next malloc fails once: the cached block is given back before the retry
    y = runtime.allocate(2048)
    assert len(d.frees) == 1 and y.ptr
    d.fail = 2
    with pytest.raises(MemoryError, match="out of memory"):
        runtime.allocate(8192)


class _Pair(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int32), ("y", ctypes.c_double)]


def test_launcher_lays_arguments_out_as_the_kernel_declares_them() -> None:
    d = RecordingDriver()
    complex128 = ctype_of(dtypes.complex128)
    argtypes = [ctypes.c_void_p, ctypes.c_bool, ctypes.c_float * 1, _Pair, ctypes.c_int64, complex128 * 1]
    launch = launcher(d, "f", argtypes, (256, 1, 1), shared=64)
    pair = _Pair(-7, 2.5)
    value = complex128(1.5, -2.0)
    launch((3, 1, 1), [0xABC0, True, bytes(ctypes.c_float(0.25)), bytes(pair), -(2**40), bytes(value)])
    (function, grid, block, shared, params), = d.launches
    assert (function, grid, block, shared) == ("f", (3, 1, 1), (256, 1, 1), 64)
    # Each pointer points at its argument's C offset: the same layout as a ctypes Structure.
    layout = type("L", (ctypes.Structure,), {"_fields_": [(f"a{i}", t) for i, t in enumerate(argtypes)]})
    base = read_argument(params, 0, ctypes.c_void_p)
    first = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
    assert [first[i] - first[0] for i in range(len(argtypes))] == [
        getattr(layout, f"a{i}").offset for i in range(len(argtypes))]
    assert base.value == 0xABC0 and read_argument(params, 1, ctypes.c_bool).value is True
    assert read_argument(params, 2, ctypes.c_float).value == 0.25
    got = read_argument(params, 3, _Pair)
    assert (got.x, got.y) == (-7, 2.5)
    assert read_argument(params, 4, ctypes.c_int64).value == -(2**40)
    c = read_argument(params, 5, complex128)
    assert (c.re, c.im) == (1.5, -2.0)


def test_launcher_refuses_a_value_its_argument_cannot_hold() -> None:
    d = RecordingDriver()
    launch = launcher(d, "f", [ctypes.c_int32], (1, 1, 1))
    with pytest.raises(struct.error, match="'i' format requires"):
        launch((1, 1, 1), [2**40])
    assert d.launches == []  # nothing half-packed was launched


def test_launcher_packs_and_launches_as_one_step_across_threads() -> None:
    seen: list[int] = []

    class Reader(RecordingDriver):
        def sender(self, function: Any, block: Any, shared: int) -> Any:
            def send(grid: Any, params: int) -> None:
                a = read_argument(params, 0, ctypes.c_int64).value
                b = read_argument(params, 1, ctypes.c_int64).value
                seen.append(a == -b)

            return send

    launch = launcher(Reader(), "f", [ctypes.c_int64, ctypes.c_int64], (1, 1, 1))

    def work(k: int) -> None:
        for i in range(2000):
            launch((1, 1, 1), [k * 10_000 + i, -(k * 10_000 + i)])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8000 and all(seen)


@pytest.mark.parametrize("exiting, released", [(False, True), (True, False), (None, False)])
def test_a_buffer_is_released_until_the_interpreter_exits(monkeypatch: pytest.MonkeyPatch, exiting: Any,
                                                          released: bool) -> None:
    # True: the exit handlers ran; None: the module was torn down (its globals read None).
    monkeypatch.setattr(buffer, "_exiting", exiting)
    freed: list[int] = []
    b = buffer.DeviceBuffer(0x1000, 64, 0, freed.append)
    del b
    assert freed == ([0x1000] if released else [])


def test_row_major_strides_are_computed_once_per_shape_and_kept_for_few_shapes() -> None:
    assert layout.ROW_MAJOR[(2, 3, 4)] == (12, 4, 1)
    assert layout.contiguous_strides((2, 0, 4)) == (4, 4, 1)  # (an empty dimension steps as one)
    assert layout.contiguous_strides(()) == ()
    assert layout.contiguous_strides((5, 7)) is layout.contiguous_strides((5, 7))
    for n in range(layout.ROW_MAJOR.KEEP + 10):
        assert layout.ROW_MAJOR[(n, 3)] == (3, 1)
    assert len(layout.ROW_MAJOR) <= layout.ROW_MAJOR.KEEP


def test_what_a_driver_made_current_is_the_calling_threads_own() -> None:
    current = Current()
    current.made = "context 0"
    seen: list[Any] = []
    thread = threading.Thread(target=lambda: seen.append(current.made))
    thread.start()
    thread.join()
    assert seen == [None] and current.made == "context 0"
