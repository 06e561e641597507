"""nonzero and searchsorted (argmax, argmin and count_nonzero are reduction rows in table.py)."""

from __future__ import annotations

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.devices import check_same
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise.ufunc import operands

from .backs import NONZERO, SEARCHSORTED
from .front import check_array, check_category


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """The indices of the non-zero elements, one index array per axis, in row-major order."""
    check_array("nonzero", x)
    if x.ndim == 0:
        raise ValueError("nonzero() needs an array of at least one dimension")
    return NONZERO[x.device.kind](x)


def searchsorted(x1: Array, x2: Array | int | float, /, *, side: str = "left",
                 sorter: Array | None = None) -> Array:
    """Where ``x2``'s values would go in ``x1`` (sorted, or sorted by ``sorter``) to keep it sorted.

    NaNs sort last, as in ``sort``.
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
    dtype = dtypes.result_type(a1.dtype, a2.dtype)
    return SEARCHSORTED[a1.device.kind](a1, a2, dtype, side, sorter)


IMPLS = [Impl("nonzero", nonzero), Impl("searchsorted", searchsorted)]
