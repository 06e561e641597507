"""nonzero and searchsorted (argmax, argmin and count_nonzero are reduction rows in table.py)."""

from __future__ import annotations

from typing import cast

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.devices import check_same
from rocm_array.hookspecs import Impl
from rocm_array.operands import operands

from .backs import NONZERO, SEARCHSORTED
from .front_reduction import check_array, check_category
from .table import BY_NAME


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """The indices of the nonzero (true) elements of ``x``, one array per axis.

    Parameters
    ----------
    x : Array
        At least 1-D.

    Returns
    -------
    tuple of Array
        int64 arrays, in row-major order of the elements.

    Raises
    ------
    ValueError
        A 0-D ``x``.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU a scan of the nonzero flags places each index (the count is
    read back to the host, as the result's size depends on it).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nonzero(xp.asarray([[0, 3], [4, 0]], device="cpu"))
    (Array([0, 1], dtype=int64, device=cpu), Array([1, 0], dtype=int64, device=cpu))
    """
    check_array("nonzero", x)
    if x.ndim == 0:
        raise ValueError("nonzero() needs an array of at least one dimension")
    return cast("tuple[Array, ...]", NONZERO[x.device.kind](x))


def searchsorted(x1: Array, x2: Array | int | float, /, *, side: str = "left",
                 sorter: Array | None = None) -> Array:
    """Where to insert ``x2``'s values into the sorted ``x1`` to keep it sorted.

    Parameters
    ----------
    x1 : Array
        1-D, sorted ascending (or put in order by ``sorter``).
    x2 : Array or Python scalar
        The values to place.
    side : {'left', 'right'}, optional
        Before (left) or after (right) equal values. Default: 'left'.
    sorter : Array, optional
        Indices that sort ``x1`` (argsort's). Default: None.

    Returns
    -------
    Array
        int64 positions of ``x2``'s shape.

    Raises
    ------
    TypeError
        dtypes without a promoted dtype, or a sorter that is not an integer array.
    ValueError
        An ``x1`` that is not 1-D, an unknown side, or a sorter of another shape.

    Notes
    -----
    Devices: NumPy on ``cpu``; a binary search per value on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.searchsorted(xp.asarray([1.0, 2.0, 4.0], device="cpu"), xp.asarray([0.5, 2.0, 3.0], device="cpu"))
    Array([0, 1, 2], dtype=int64, device=cpu)
    """
    check_array("searchsorted", x1)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted(): x1 must be 1-D, got {x1.ndim}-D")
    a1, a2 = operands("searchsorted", (x1, x2))
    for a in (a1, a2):
        check_category("searchsorted", a, "real-valued")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', not {side!r}")
    if sorter is not None:
        check_array("searchsorted", sorter)
        check_same(a1, sorter)
        if sorter.dtype not in dtypes.CATEGORIES["integral"]:
            raise TypeError(f"searchsorted(): sorter must have an integer dtype, not {sorter.dtype.name}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted(): sorter's shape {sorter.shape} is not x1's {x1.shape}")
        _check_sorter(sorter)
    dtype = dtypes.result_type(a1.dtype, a2.dtype)
    return cast("Array", SEARCHSORTED[a1.device.kind](a1, a2, dtype, side, sorter))


def _check_sorter(sorter: Array) -> None:
    """ValueError (NumPy's class) for a sorter position outside x1: the backs read x1 at them. Two
    reductions and a read on the host, on every device alike."""
    if sorter.size == 0:
        return
    lo, hi = int(BY_NAME["min"](sorter)), int(BY_NAME["max"](sorter))
    if lo < 0 or hi >= sorter.size:
        raise ValueError(f"searchsorted(): sorter holds {lo if lo < 0 else hi}, outside x1's positions 0 to "
                         f"{sorter.size - 1}; pass the positions that sort x1 (argsort(x1))")


IMPLS = [Impl("nonzero", nonzero), Impl("searchsorted", searchsorted)]
