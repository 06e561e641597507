"""Where array-API code meets NumPy: dtypes, scalars and index arrays, the choices the standard
leaves open, copies and pickles, the strict-host switch and the numpy_dispatch plugin."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import rocm_array as xp
from rocm_array.dtypes import ALL

from engines import to_numpy


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_numpy_reads_our_dtypes(dtype) -> None:
    assert np.dtype(dtype) == dtype.numpy
    assert dtype == dtype.numpy and dtype == dtype.numpy.type and dtype.numpy == dtype
    assert (dtype.itemsize, dtype.kind, dtype.type, dtype.str) == (dtype.numpy.itemsize, "bfiuc"["bfiuc".index(dtype.kind)],
                                                                   dtype.numpy.type, dtype.numpy.str)
    assert xp.ones(2, dtype=dtype.numpy).dtype is dtype  # dtype= takes NumPy's and returns ours
    assert xp.ones(2, dtype=dtype.numpy.type).dtype is dtype
    assert xp.isdtype(dtype.numpy, dtype)
    assert pickle.loads(pickle.dumps(dtype)) is dtype


def test_dtype_arguments_refuse_what_has_no_counterpart() -> None:
    with pytest.raises(TypeError, match=r"ones\(\): dtype must be a dtype object, not the name 'float32': use xp.float32"):
        xp.ones(2, dtype="float32")
    for bad, shown in ((np.dtype("U3"), "dtype\\('<U3'\\)"), (np.str_, "str_"), (object, "object"), (1, "1")):
        with pytest.raises(TypeError, match=f"ones\\(\\): {shown} is no rocm_array dtype: use one of rocm_array's dtypes"):
            xp.ones(2, dtype=bad)
    with pytest.raises(TypeError, match=r"astype\(\): dtype must be a dtype object"):
        xp.astype(xp.ones(2), "float32")
    assert xp.ones(1, dtype=float).dtype is xp.float64 and xp.ones(1, dtype=bool).dtype is xp.bool
    assert xp.float32 != np.float64 and xp.float32 != "float32"


def test_numpy_scalars_mix_as_python_scalars(device: str) -> None:
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, device=device)
    for s in (np.float32(2), np.float64(2), np.int64(2), np.int8(2)):
        for r in (x * s, s * x, xp.multiply(x, s), xp.multiply(s, x)):
            assert r.dtype is xp.float32 and r.device == x.device  # weak, as a Python scalar
            assert to_numpy(r).tolist() == [2.0, 4.0]
    i = xp.asarray([1, 2], device=device)
    assert to_numpy(i + np.int64(1)).tolist() == [2, 3]
    assert to_numpy(i == np.int32(2)).tolist() == [False, True]
    i += np.int64(1)
    assert to_numpy(i).tolist() == [2, 3]
    i[0] = np.int16(7)
    assert to_numpy(i).tolist() == [7, 3]
    with pytest.raises(TypeError, match="cannot be combined"):
        x + np.bool_(True)


def test_numpy_index_arrays(device: str) -> None:
    h = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(h, device=device)
    for key in (np.array([0, 2]), np.array([True, False, True]), (slice(None), np.array([3, 1, 1])),
                (np.array([0, 2]), np.array([1, 3])), np.int64(1), (np.int32(2), np.int8(-1))):
        r = x[key]
        assert r.device == x.device
        np.testing.assert_array_equal(to_numpy(r), h[key])
    x[np.array([0, 2])] = 5.0
    h[np.array([0, 2])] = 5.0
    np.testing.assert_array_equal(to_numpy(x), h)
    with pytest.raises(IndexError, match="integer or bool"):
        x[np.array([0.5])]


def _numpy_may_view(device: str) -> bool:
    """Whether NumPy may read the device's arrays in place: cpu ones, unless CI's strict run."""
    return device == "cpu" and os.environ.get("ROCM_ARRAY_STRICT_HOST") != "1"


def test_numpy_arrays_elsewhere_say_how_to_convert(device: str) -> None:
    x = xp.asarray([1.0], device=device)
    with pytest.raises(TypeError, match="xp.asarray"):
        xp.add(x, np.ones(1))
    if _numpy_may_view(device):  # NumPy's ufuncs take both, as NumPy would: cpu arrays are NumPy memory
        for r in (np.add(np.ones(1), x), x + np.ones(1)):
            assert isinstance(r, xp.Array) and r.device == x.device and to_numpy(r).tolist() == [2.0]
        return
    with pytest.raises(TypeError, match="xp.asarray"):
        np.add(np.ones(1), x)
    with pytest.raises(TypeError, match="xp.asarray"):
        x + np.ones(1)


#: NumPy functions and ufunc calls that rocm_array has no implementation of (no adapter, a
#: NumPy-only argument, a NumPy array beside ours).
WITHOUT_ADAPTER = {
    "average": lambda a, n: np.average(a, axis=1, weights=n[0]),
    "histogram": lambda a, n: np.histogram(a, bins=3),
    "deg2rad": lambda a, n: np.deg2rad(a),
    "add.outer": lambda a, n: np.add.outer(a[0], a[1]),
    "sum_where": lambda a, n: np.sum(a, where=a > 2.0),
    "nansum_where": lambda a, n: np.nansum(a, where=a > 2.0),
    "concatenate_ndarray": lambda a, n: np.concatenate([a, n]),
    "may_share_memory": lambda a, n: np.may_share_memory(n, a),
}


@pytest.mark.parametrize("case", WITHOUT_ADAPTER)
def test_numpy_functions_without_adapter(device: str, case: str) -> None:
    """On cpu NumPy runs them on the arrays' elements and its arrays come back as ours; on a GPU
    (and on cpu under ROCM_ARRAY_STRICT_HOST=1) they are refused, with nothing copied."""
    f = WITHOUT_ADAPTER[case]
    h = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(h, device=device)
    if not _numpy_may_view(device):
        with pytest.raises(TypeError, match=r"numpy\.\w+(\.outer)?\(\).*(xp\.asarray|xp function|from_dlpack)"):
            f(x, h)
        return
    got, want = f(x, h), f(h, h)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        if isinstance(w, np.ndarray):
            assert isinstance(g, xp.Array) and g.device == x.device, case
            np.testing.assert_array_equal(to_numpy(g), w)
        else:
            assert g == w and not isinstance(g, xp.Array), case


def test_numpy_functions_without_adapter_refuse_by_name(device: str) -> None:
    x = xp.asarray([1.0, 2.0], device=device, dtype=xp.float32)
    if _numpy_may_view(device):
        pytest.skip("NumPy runs these on cpu arrays")
    with pytest.raises(TypeError, match=rf"^numpy\.average\(\) has no rocm_array implementation.* float32 array on "
                                        rf"{x.device}.*np\.from_dlpack\(x\.to_device\('cpu'\)\)"):
        np.average(x)


def test_numpy_writes_to_out_arrays() -> None:
    """``out=`` a cpu array: NumPy writes its elements, and the array itself comes back."""
    if not _numpy_may_view("cpu"):
        pytest.skip("ROCM_ARRAY_STRICT_HOST=1")
    x, o = xp.asarray([1.0, -2.0], device="cpu"), xp.zeros(2, device="cpu")
    assert np.fmax(x, 0.0, out=o) is o and to_numpy(o).tolist() == [1.0, 0.0]
    v = np.diagonal(xp.reshape(xp.arange(4.0, device="cpu"), (2, 2)))  # NumPy's view comes back sharing memory
    assert isinstance(v, xp.Array) and to_numpy(v).tolist() == [0.0, 3.0]


def test_open_choices(device: str) -> None:
    i = xp.asarray([1, 2, 3], device=device)
    assert (i / 2).dtype is xp.float64 and to_numpy(i / 2).tolist() == [0.5, 1.0, 1.5]
    assert xp.divide(xp.astype(i, xp.int8), xp.astype(i, xp.uint8)).dtype is xp.float64
    with pytest.raises(TypeError, match="in-place divide"):
        i /= 2
    b = xp.asarray([True, False, True], device=device)
    for f in (xp.sum, xp.prod):
        assert f(b).dtype is xp.int64
    assert to_numpy(xp.sum(b)).item() == 2
    assert to_numpy(xp.cumulative_sum(b)).tolist() == [1, 1, 2]
    assert xp.cumulative_sum(b).dtype is xp.int64
    with pytest.raises(ValueError, match="negative power"):
        i ** -2
    assert to_numpy(i ** xp.asarray([-1, -1, 2], device=device)).tolist() == [1, 0, 9]  # documented values
    assert (i + 0.5).dtype is xp.float64 and (i * 1j).dtype is xp.complex128
    with pytest.raises(TypeError):
        xp.clip(i, 0.5)


def test_broadcast_views_refuse_writes(device: str) -> None:
    a = xp.asarray([1.0, 2.0, 3.0], device=device)
    v = xp.broadcast_to(a, (2, 3))
    for write in (lambda: v.__setitem__((0, 0), 5.0), lambda: v.__iadd__(1.0)):
        with pytest.raises(ValueError, match="broadcast view"):
            write()
    _, w = xp.broadcast_arrays(xp.asarray([[0.0], [0.0]], device=device), a)
    with pytest.raises(ValueError, match="broadcast view"):
        w[...] = 0.0
    assert to_numpy(a).tolist() == [1.0, 2.0, 3.0]
    e = xp.expand_dims(a, axis=0)  # a zero stride on a one-element axis writes once: allowed
    e[0, 0] = 9.0
    assert to_numpy(a)[0] == 9.0


def test_copies_and_pickles(device: str) -> None:
    x = xp.asarray([1.0, 2.0], device=device)
    for c in (copy.copy(x), copy.deepcopy(x)):
        c[0] = 5.0
        assert to_numpy(x).tolist() == [1.0, 2.0] and c.device == x.device
    big = xp.arange(10**6, dtype=xp.float64, device=device)
    view = big[10:20]
    data = pickle.dumps(view)
    assert len(data) < 1000  # the view's 80 bytes, not the buffer's 8 MB
    back = pickle.loads(data)
    assert back.device == view.device and back.dtype is xp.float64
    np.testing.assert_array_equal(to_numpy(back), np.arange(10, 20))
    assert pickle.loads(pickle.dumps(x.device)) == x.device  # by name, not its runtime
    xp.add(x, x), xp.sum(x), xp.cumulative_sum(x)  # their caches now hold this device's kernels
    for f in (xp.add, xp.sum, xp.cumulative_sum, xp.linalg.solve):
        assert pickle.loads(pickle.dumps(f)) is f  # functions pickle by name (Cubed's processes executor)
    t = xp.asarray(np.arange(6.0).reshape(2, 3), device=device).mT  # a strided view
    np.testing.assert_array_equal(to_numpy(pickle.loads(pickle.dumps(t))), np.arange(6.0).reshape(2, 3).T)


def test_explicit_host_copies(device: str) -> None:
    """What a NumPy-only writer can call instead of ``np.asarray`` (the smallest change to Cubed)."""
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device=device)
    for host in (np.from_dlpack(x, device="cpu"), np.from_dlpack(x.mT.to_device("cpu"))):
        assert isinstance(host, np.ndarray)
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), [[1.0, 2.0], [3.0, 4.0]])


def test_device_buffers_refuse_to_pickle(device: str) -> None:
    if device == "cpu":
        pytest.skip("a cpu array's buffer is a NumPy array")
    x = xp.asarray([1.0], device=device)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(x._buf)


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with ``env``; the host switches come only from ``env``
    (CI runs this file again under ROCM_ARRAY_STRICT_HOST=1)."""
    import os
    inherited = {k: v for k, v in os.environ.items()
                 if k not in ("ROCM_ARRAY_STRICT_HOST", "ROCM_ARRAY_HOST_COPY")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**inherited, **env})


def test_strict_host_switch() -> None:
    code = "import numpy as np, rocm_array as xp; np.asarray(xp.asarray([1.0], device='cpu'))"
    assert _run(code).returncode == 0
    strict = _run(code, ROCM_ARRAY_STRICT_HOST="1")
    assert strict.returncode != 0 and "ROCM_ARRAY_HOST_COPY" in strict.stderr
    assert _run(code, ROCM_ARRAY_STRICT_HOST="1", ROCM_ARRAY_HOST_COPY="1").returncode == 0
    explicit = "import numpy as np, rocm_array as xp; print(np.from_dlpack(xp.asarray([1.0], device='cpu')))"
    assert _run(explicit, ROCM_ARRAY_STRICT_HOST="1").returncode == 0


def test_numpy_functions_stay_on_the_device(device: str) -> None:
    with_nan = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    for h in (with_nan, np.where(np.isnan(with_nan), 2.0, with_nan)):  # (np.sum of a NaN is NaN either way)
        _stay_on_the_device(h, device)


def _stay_on_the_device(h: np.ndarray, device: str) -> None:
    x = xp.asarray(h, device=device)
    for f in (np.sum, np.mean, np.max, np.nanmean, np.nansum, np.nanmax, np.nanmin, np.nanstd, np.nanvar,
              np.exp, np.transpose, np.ravel, lambda a: np.concatenate([a, a], axis=1), np.isnan,
              lambda a: np.where(np.isnan(a), 0.0, a), lambda a: np.sum(a, axis=0, keepdims=True),
              lambda a: a.sum(axis=1), lambda a: a.reshape(3, 2), lambda a: np.add.reduce(a, axis=1),
              lambda a: np.zeros_like(a), lambda a: np.asarray([1, 2], like=a), lambda a: a.astype("f4"),
              lambda a: np.nansum(a, where=True)):  # NumPy's default where= is no NumPy-only argument
        r = f(x)
        assert isinstance(r, xp.Array) and r.device == x.device, f
        np.testing.assert_allclose(to_numpy(r), f(h), equal_nan=True)


def test_numpy_functions_check_axes(device: str) -> None:
    from rocm_array_plugins.numpy_dispatch.dask import numel

    x = xp.ones((2, 3), device=device)
    assert to_numpy(numel(x, axis=-1)).tolist() == [3.0, 3.0]
    assert to_numpy(np.take(x, 1, axis=-1)).tolist() == [1.0, 1.0]
    for call in (lambda: numel(x, axis=5), lambda: numel(x, axis=(1, -1)), lambda: np.take(x, 1, axis=2),
                 lambda: np.nanvar(x, axis=(0, 0))):
        with pytest.raises(xp.AxisError, match=r"^(numel|take|nanvar|sum)\(\): (axis|repeated)"):
            call()


def test_numpy_dispatch_plugin_can_be_turned_off() -> None:
    code = ("import numpy as np, rocm_array as xp\n"
            "x = xp.asarray([1.0])\n"
            "assert x * np.float32(2) is not None\n"  # the operators do not need the plugin
            "try:\n    np.sum(x)\nexcept TypeError as e:\n    print('refused', e)\n")
    r = _run(code, ROCM_ARRAY_DISABLE_PLUGINS="numpy_dispatch")
    assert r.returncode == 0 and "refused" in r.stdout, r.stderr
    assert "numpy_dispatch" in _run("import rocm_array, sys; sys.argv=['x','plugins']; "
                                    "from rocm_array.__main__ import main; main()").stdout


def test_dlpack_stream_argument(device: str) -> None:
    x = xp.asarray([1.0, 2.0], device=device)
    assert type(x.__dlpack__()).__name__ == "PyCapsule"  # (the simulator's default stream had been missing)
    for bad in ("a", 1.5, True):
        with pytest.raises(TypeError, match=r"^__dlpack__\(\): stream must be an int"):
            x.__dlpack__(stream=bad)
    with pytest.raises(TypeError, match=r"^__dlpack__\(\): copy must be a bool or None"):
        x.__dlpack__(copy="yes")
    if device == "cpu":
        assert np.from_dlpack(x).tolist() == [1.0, 2.0]
        with pytest.raises(BufferError, match=r"^__dlpack__\(\): a cpu array cannot be exported"):
            x.__dlpack__(dl_device=(2, 0))
    else:
        with pytest.raises((RuntimeError, BufferError)):  # NumPy's own refusal, not a SystemError
            np.from_dlpack(x)
