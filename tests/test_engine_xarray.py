"""xarray over rocm_array data: arithmetic, reductions with the default skipna (NumPy's
nan-functions on our arrays), isel with lists, groupby, concat; the data stays ours."""

from __future__ import annotations

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
    "mean": lambda d: d.mean(),
    "mean_y": lambda d: d.mean("y"),
    "std": lambda d: d.std("x"),
    "max": lambda d: d.max("y"),
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
