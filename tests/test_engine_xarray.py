"""xarray over rocm_array data: arithmetic, reductions with the default skipna (NumPy's
nan-functions on our arrays) over some dimensions and all, where, isel with lists, groupby,
concat; the data stays ours. What xarray itself keeps from working is tested to fail as it does
(see the README's "With NumPy, Dask, xarray, Cubed and scikit-learn")."""

from __future__ import annotations

import os

import numpy as np
import pytest

import rocm_array as xp

from engines import assert_on

xr = pytest.importorskip("xarray")

H = np.random.default_rng(1).standard_normal((6, 8))
H[1, 2] = np.nan  # the default skipna leaves it out

CASES = {
    "arithmetic": lambda d: d * 2 + d,
    "sum": lambda d: d.sum("x"),
    "sum_all": lambda d: d.sum(),
    "sum_all_skipna_false": lambda d: d.sum(skipna=False),
    "mean": lambda d: d.mean(),
    "mean_y": lambda d: d.mean("y"),
    "std": lambda d: d.std("x"),
    "max": lambda d: d.max("y"),
    "max_all": lambda d: d.max(),
    "where_other": lambda d: d.where(d > 0, -d),
    "xr_where": lambda d: xr.where(d > 0, d, d * 0.5),
    "isel_list": lambda d: d.isel(x=[0, 2, 4]),
    "sel_slice": lambda d: d.sel(x=slice(1, 3)),
    "groupby_mean": lambda d: d.groupby("g").mean(),
    "groupby_sum": lambda d: d.groupby("g").sum(),
    "concat": lambda d: xr.concat([d, d], dim="x"),
    "transpose": lambda d: d.T,
}


def _frame(data):
    return xr.DataArray(data, dims=("x", "y"), coords={"x": np.arange(6), "g": ("x", [0, 1, 0, 1, 2, 2])})


@pytest.mark.parametrize("case", CASES)
def test_xarray(device: str, case: str) -> None:
    got = CASES[case](_frame(xp.asarray(H, device=device)))
    want = CASES[case](_frame(H))
    assert got.dims == want.dims
    assert_on(got.data, want.data, device)


@pytest.mark.xfail(raises=TypeError, strict=True,
                   reason="xarray's dtypes.maybe_promote takes where's NaN fill only from a NumPy dtype, and "
                          "refuses array-API dtypes such as rocm_array's: the change belongs in xarray (README)")
def test_xarray_where_default_fill(device: str) -> None:
    got = _frame(xp.asarray(H, device=device))
    assert_on(got.where(got > 0).data, _frame(H).where(_frame(H) > 0).data, device)


def test_xarray_host_values(device: str) -> None:
    """What a user calls for host values: ``item()`` and the data's own DLPack copy on every device;
    ``.values`` (NumPy's implicit conversion) only where NumPy may read the array in place."""
    d = _frame(xp.asarray(H, device=device))
    assert d.sum().item() == pytest.approx(np.nansum(H))
    np.testing.assert_array_equal(np.from_dlpack(d.data.to_device("cpu")), H)
    assert d.copy(data=d.data.to_device("cpu")).data.device == xp.asarray(0, device="cpu").device
    if device == "cpu" and os.environ.get("ROCM_ARRAY_STRICT_HOST") != "1":
        np.testing.assert_array_equal(d.values, H)
    else:
        with pytest.raises(TypeError, match=r"np\.from_dlpack\(x\.to_device\('cpu'\)\)"):
            d.values
