"""diff: n-th forward differences along one axis, after optional prepend / append.

Prepend and append are joined to x by the namespace's ``concat`` (from the
essential elementwise plugin: shape and device checks, promotion, memory
primitives). The back computes one first-order difference, applied n times
(each rounded to the result dtype, as the spec's recursive definition has it).
"""

from __future__ import annotations

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.axes import integer, normalize_axis
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise import own as elementwise

from .backs import DIFF
from .front_reduction import check_array, check_category


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The ``n``-th forward difference of ``x`` along ``axis``: ``x[i + 1] - x[i]``, n times.

    Parameters
    ----------
    x : Array
        A numeric or bool array of at least one dimension.
    axis : int, optional
        Default: -1.
    n : int, optional
        How many times; non-negative. Default: 1.
    prepend, append : Array, optional
        Joined before or after ``x`` along ``axis`` first. Default: None.

    Returns
    -------
    Array
        A new array, ``n`` shorter along ``axis`` (plus the joined lengths).

    Raises
    ------
    TypeError
        n that is not an int.
    ValueError
        A negative n, or a 0-D ``x``.
    AxisError
        An axis out of range (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: each difference is the elementwise subtract kernel of two shifted views.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.diff(xp.asarray([1, 4, 9, 16], device="cpu"))
    Array([3, 5, 7], dtype=int64, device=cpu)
    """
    check_array("diff", x)
    parts = [check_array("diff", p) for p in (prepend, x, append) if p is not None]
    for p in parts:
        check_category("diff", p, "numeric")
    axis = normalize_axis(axis, x.ndim, "diff")
    n = integer(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    if any(p.ndim != x.ndim or p.shape[:axis] + p.shape[axis + 1:] != x.shape[:axis] + x.shape[axis + 1:]
           for p in parts):
        raise ValueError(f"diff(): prepend and append must have x's shape {x.shape} except along axis {axis}, got "
                         + ", ".join(str(p.shape) for p in parts if p is not x))
    a = elementwise("concat")(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(min(n, a.shape[axis])):  # (past the axis' length every difference is empty)
        shape = tuple(max(m - 1, 0) if i == axis else m for i, m in enumerate(a.shape))
        a = DIFF[a.device.kind](a, axis) if 0 not in shape else memory.empty(shape, a.dtype, a.device)
    return a


IMPLS = [Impl("diff", diff)]
