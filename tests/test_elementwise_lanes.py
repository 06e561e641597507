"""The elementwise lanes (``front_ufunc.LANES``) over a recording driver (no GPU needed): a repeated call
skips the front and launches what the full path would, with every check the front makes that
depends on a value, not a type; operands a lane cannot take go the full path."""

from __future__ import annotations

import ctypes
import dataclasses
import traceback
from typing import Any

import pytest
from helpers import RecordingDriver, read_argument

import rocm_array as xp
from rocm_array import fusion, memory
from rocm_array.array import Array
from rocm_array.devices import Device
from rocm_array.dtypes import DType
from rocm_array.runtime.gpu import GpuRuntime
from rocm_array_plugins.elementwise import front_ufunc, gpu, gpu_lanes, table
from rocm_array_plugins.elementwise.table import UFUNCS

ROWS = {u.name: u for u in UFUNCS}


def _recording_device() -> Device:
    """A GPU device over a recording driver whose kernels are named, not compiled."""
    runtime = GpuRuntime(RecordingDriver())  # type: ignore[arg-type]
    runtime.kernel = lambda path, name, group=(), options=(): name  # type: ignore[method-assign]
    return Device("gpu", 0, runtime)


@pytest.fixture(autouse=True)
def eager_kernels() -> Any:
    """These tests are of the eager launches (with fusion on, the default, the lanes defer results)."""
    with fusion.eager():
        yield


@pytest.fixture
def dev() -> Device:
    return _recording_device()


def new(dev: Device, shape: tuple[int, ...], dtype: DType) -> Array:
    return memory.empty(shape, dtype, dev)


def _launch(dev: Device, argtypes: list[Any]) -> tuple[str, list[Any]]:
    """The last launch's kernel and its arguments, read as the kernel declares them."""
    function, _, _, _, params = dev.runtime.driver.launches[-1]  # type: ignore[attr-defined]
    return function, [read_argument(params, i, t).value for i, t in enumerate(argtypes)]


def _contiguous(row: str, dtype: DType, s: int) -> str:
    """The name of ``row``'s contiguous kernel for ``dtype`` with the scalar at position ``s``."""
    return gpu.ufunc_names(ROWS[row], dtype, "contiguous")[s]


def _ptr(x: Array) -> int:
    return x._buf.ptr + x._offset * x.dtype.itemsize


def test_a_repeated_call_skips_the_front(dev: Device, monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = new(dev, (5, 3), xp.float32), new(dev, (5, 3), xp.float32)
    first = x + y
    monkeypatch.setattr(front_ufunc.Ufunc, "_front", lambda self, args: pytest.fail("the front ran again"))
    out = x + y
    assert (out.shape, out.dtype, out.device) == (first.shape, first.dtype, first.device)
    args = [ctypes.c_void_p] * 3 + [ctypes.c_int64]  # (the scalar slot is skipped: read up to n)
    kernel, (o, a, b, _) = _launch(dev, args)
    assert kernel == _contiguous("add", xp.float32, 0)
    assert (o, a, b) == (_ptr(out), _ptr(x), _ptr(y))
    assert len(dev.runtime.driver.launches) == 2  # type: ignore[attr-defined]


def test_views_and_scalars_on_either_side(dev: Device) -> None:
    x = new(dev, (10,), xp.float32)
    for _ in range(2):  # the first call makes the lane, the second takes it
        out = x[3:] - x[:-3]
        argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_float, ctypes.c_int64]
        assert _launch(dev, argtypes)[1] == [_ptr(out), _ptr(x) + 12, _ptr(x), 0.0, 7]
        out = x[2:] * 2.5
        assert _launch(dev, argtypes) == (_contiguous("multiply", xp.float32, 2), [_ptr(out), _ptr(x) + 8, None, 2.5, 8])
        out = 0.5 - x
        assert _launch(dev, argtypes) == (_contiguous("subtract", xp.float32, 1), [_ptr(out), None, _ptr(x), 0.5, 10])


def test_a_lane_checks_a_python_int_against_the_dtype(dev: Device) -> None:
    x = new(dev, (4,), xp.int8)
    for _ in range(2):
        x + 1
        1 - x
    launches = len(dev.runtime.driver.launches)  # type: ignore[attr-defined]
    for call in (lambda: x + 128, lambda: -129 * x, lambda: xp.add(x, 2**70)):
        with pytest.raises(OverflowError, match="out of bounds for int8"):
            call()
    assert len(dev.runtime.driver.launches) == launches  # type: ignore[attr-defined]


def test_results_of_another_dtype_empty_and_0d(dev: Device) -> None:
    x = new(dev, (6,), xp.complex64)
    for _ in range(2):
        assert (x == x).dtype == xp.bool and xp.abs(x).dtype == xp.float32
    launches = len(dev.runtime.driver.launches)  # type: ignore[attr-defined]
    e = new(dev, (0, 3), xp.float32)
    for _ in range(2):
        assert (e + e).shape == (0, 3)
    assert len(dev.runtime.driver.launches) == launches  # type: ignore[attr-defined]  # nothing to launch
    s = new(dev, (), xp.float32)
    for _ in range(2):
        assert (s * s).shape == ()
        assert _launch(dev, [ctypes.c_void_p] * 3 + [ctypes.c_float, ctypes.c_int64])[1][-1] == 1


@pytest.mark.parametrize("operands", [
    lambda dev: (new(dev, (4, 3), xp.float32), new(dev, (3,), xp.float32)),  # broadcast
    lambda dev: (new(dev, (3, 4), xp.float32).mT, new(dev, (4, 3), xp.float32)),  # not row-major
    lambda dev: (new(dev, (3,), xp.float32), xp.ones(3, device="cpu")),  # another device
    lambda dev: (new(dev, (3,), xp.int8), xp.float32),  # not an operand at all
])
def test_other_operands_take_the_full_path(dev: Device, operands: Any) -> None:
    assert front_ufunc._lane_key(operands(dev), 2) is None


def test_operands_that_need_a_cast_get_no_lane(dev: Device) -> None:
    x, y = new(dev, (3,), xp.int8), new(dev, (3,), xp.int16)
    assert front_ufunc._lane_key((x, y), 2) == (dev.runtime, xp.int8, xp.int16)
    assert gpu_lanes.lane(ROWS["add"], dev, (xp.int8, xp.int16), xp.int16, xp.int16) is None
    assert gpu_lanes.lane(ROWS["add"], dev, (xp.int16, int), xp.int16, xp.int16) is not None


def test_what_the_front_refuses_it_refuses_every_time(dev: Device) -> None:
    x = new(dev, (3,), xp.int8)
    for _ in range(2):
        with pytest.raises(TypeError, match="cannot be combined with a int8 array"):
            x + True
        with pytest.raises(TypeError, match="does not accept float32"):
            xp.bitwise_and(new(dev, (3,), xp.float32), new(dev, (3,), xp.float32))


def test_a_row_with_lanes_is_still_plain_data(dev: Device) -> None:
    x = new(dev, (3,), xp.float32)
    x + x
    assert ROWS["add"]._lanes
    assert dataclasses.asdict(ROWS["add"])["name"] == "add"  # array-api-tests' reporting does this


def test_lanes_launch_on_their_own_runtime(dev: Device) -> None:
    """Two runtimes of one device index (a real gpu:0 and this test's) never share a lane."""
    other = _recording_device()
    for _ in range(2):
        new(dev, (4,), xp.float32) + new(dev, (4,), xp.float32)
        new(other, (4,), xp.float32) + new(other, (4,), xp.float32)
    assert len(dev.runtime.driver.launches) == len(other.runtime.driver.launches) == 2  # type: ignore[attr-defined]


def test_the_last_lane_taken_hands_other_operands_to_theirs(dev: Device) -> None:
    """A row calls the lane its last call took (``Ufunc.hot``) for any operands; a lane made for
    other kinds sends them on, and each call launches what its own operands need."""
    add = ROWS["add"]
    f, i = new(dev, (4,), xp.float32), new(dev, (4,), xp.int8)
    calls = [((f, f), xp.float32, 0), ((i, i), xp.int8, 0), ((f, 1.5), xp.float32, 2), ((2, i), xp.int8, 1)]
    for operands, _, _ in calls:  # (each kind's first call goes through the front, which makes its lane)
        operands[0] + operands[1]
    for _ in range(2):
        for operands, dtype, s in calls:
            out = operands[0] + operands[1]
            assert out.dtype == dtype and out.shape == (4,)
            assert dev.runtime.driver.launches[-1][0] == _contiguous("add", dtype, s)  # type: ignore[attr-defined]
            assert add.hot[0] is add._lanes[front_ufunc._lane_key(operands, 2)]
            assert xp.add(*operands).dtype == dtype  # (the function's call takes the same lane)


def test_a_param_row_calls_its_last_lane_and_it_hands_other_operands_on(dev: Device) -> None:
    """A ParamUfunc (elu's alpha) calls the lane its last call took (``ParamUfunc.last``) with x and the
    parameters; a lane made for float32 sends a float64 x to its own, and an array of another layout or
    device, or no array, to the front, whose errors stand."""
    elu = table.BY_NAME["elu"]
    f, d = new(dev, (4,), xp.float32), new(dev, (4,), xp.float64)
    for round_ in range(3):  # (each kind's first call goes through the front, which makes its lane)
        for x, dtype in ((f, xp.float32), (d, xp.float64)):
            out = elu(x, 0.5)
            function, args = _launch(dev, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double, ctypes.c_double])
            assert out.dtype == dtype and function == gpu.ufunc_names(elu, dtype, "contiguous")[0]
            assert args[2:] == [0.5, 0.0]  # (a row of one parameter: the second is 0)
            assert (elu.last[0] is elu._lanes[front_ufunc._lane_key((x,), 1)]) is (round_ > 0)
    t = Array(new(dev, (2, 2), xp.float32)._buf, (2, 2), (1, 2), 0, xp.float32, dev)  # (transposed)
    assert elu(t, 0.5).shape == (2, 2)
    last = dev.runtime.driver.launches[-1][0]  # type: ignore[attr-defined]
    assert last != gpu.ufunc_names(elu, xp.float32, "contiguous")[0]
    assert elu(xp.ones((3,), dtype=xp.float32, device="cpu"), 0.5).device.kind == "cpu"
    with pytest.raises(TypeError, match=r"elu\(\) takes x and alpha, positionally"):
        elu(f)
    with pytest.raises(TypeError, match="does not accept int8"):
        elu(new(dev, (4,), xp.int8), 0.5)


def test_an_operand_of_known_shape_but_other_strides_is_no_lanes(dev: Device) -> None:
    """The lane knows the shape and strides tuples of the last row-major operand; an operand that
    holds the same shape tuple with other strides (a transposed view) still takes the full path."""
    x = new(dev, (3, 3), xp.float32)
    for _ in range(2):
        x + x
    t = Array(x._buf, x._shape, (1, 3), 0, x._dtype, x._device)  # (x's own shape tuple, transposed)
    out = t + t
    assert dev.runtime.driver.launches[-1][0] != _contiguous("add", xp.float32, 0)  # type: ignore[attr-defined]
    assert out.shape == (3, 3)


def test_a_wrong_count_of_operands_is_the_fronts_error_with_a_lane_hot(dev: Device) -> None:
    x = new(dev, (3,), xp.float32)
    for _ in range(2):
        xp.add(x, x)
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional argument\(s\), got 3"):
        xp.add(x, x, x)
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional argument\(s\), got 1"):
        xp.add(x)


def test_a_lanes_traceback_shows_its_lines(dev: Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane's code is generated (``gpu_lanes``); an error raised in it shows the line it ran."""
    x = new(dev, (3,), xp.float32)
    for _ in range(2):
        x * x
    lane = ROWS["multiply"].hot[0]
    monkeypatch.setitem(lane.__globals__, "per_block", 0)  # (a lane's constants are its globals)
    with pytest.raises(ZeroDivisionError) as raised:
        x * x
    frame = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert frame.filename == "<lane 0>" and "per_block" in (frame.line or "")
