"""gather, scatter, scatter_add, index_select and index_add along one dimension (torch's semantics).

Indices are of an integer dtype and must lie in ``[0, size)`` of the indexed
dimension: anything else is an IndexError (on a GPU, found by the kernel and
reported when the call returns). The results are new arrays; ``scatter*`` and
``index_add`` start from a copy of ``x``. index_select / index_add are gather /
scatter_add with the 1-D index broadcast over the other dimensions.
"""

from __future__ import annotations

from typing import cast

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.axes import normalize_axis
from rocm_array.dtypes import CATEGORIES
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise import own as elementwise

from .backs import GATHER, SCATTER
from .common import arrays

#: ``back(out, src, index, dim, add)``: in place into ``out``; src.shape[d] >= index.shape[d] for every d.


def _index(name: str, x: Array, index: Array, dim: int) -> tuple[int, Array]:
    arrays(name, x=x, index=index)
    if index.dtype not in CATEGORIES["integral"]:
        raise TypeError(f"nn.{name}(): index must have an integer dtype, not {index.dtype.name}")
    d = normalize_axis(dim, max(x.ndim, 1), f"nn.{name}")
    return d, memory.contiguous(index, dtypes.int64) if index.dtype is not dtypes.int64 else index


def _fits(name: str, what: str, index: Array, y: Array, skip: int | None) -> None:
    if index.ndim != y.ndim or any(i > n for d, (i, n) in enumerate(zip(index.shape, y.shape)) if d != skip):
        raise ValueError(f"nn.{name}(): index of shape {index.shape} does not fit {what} of shape {y.shape}")


def gather(x: Array, dim: int, index: Array, /) -> Array:
    """Elements of ``x`` picked along ``dim`` by ``index`` (PyTorch's gather).

    Parameters
    ----------
    x : Array
        The source.
    dim : int
        The axis indexed.
    index : Array
        An integer array of x's number of dimensions (no larger than x along the other axes).

    Returns
    -------
    Array
        Of ``index``'s shape and x's dtype: out[i][j] = x[index[i][j]][j] for dim 0.

    Raises
    ------
    TypeError
        A non-integer index.
    ValueError
        Shapes that do not fit.
    IndexError
        An index out of bounds (checked on the device).

    Notes
    -----
    Devices: NumPy on ``cpu``; one kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
    >>> xp.nn.gather(x, 1, xp.asarray([[1, 0], [0, 0]], device="cpu"))
    Array([[2, 1],
           [3, 3]], dtype=int64, device=cpu)
    """
    d, idx = _index("gather", x, index, dim)
    _fits("gather", "x", idx, x, d)
    if idx.size == 0:
        return memory.empty(idx.shape, x.dtype, x.device)
    return cast("Array", GATHER[x.device.kind](x, idx, d, "gather"))


def _scatter(name: str, x: Array, dim: int, index: Array, src: Array, add: bool, what: str = "src") -> Array:
    """``src`` (the parameter ``what``) written or added into a copy of x at ``index`` along ``dim``."""
    d, idx = _index(name, x, index, dim)
    arrays(name, x=x, **{what: src})
    if src.dtype is not x.dtype:
        raise TypeError(f"nn.{name}(): {what} has dtype {src.dtype.name}, x {x.dtype.name}; they must match")
    if add and x.dtype not in CATEGORIES["real-valued"]:
        raise TypeError(f"nn.{name}() adds real numbers; got {x.dtype.name}")
    _fits(name, "x", idx, x, d)
    _fits(name, what, idx, src, None)
    out = memory.empty(x.shape, x.dtype, x.device)
    memory.copy_into(out, x)
    if idx.size:
        SCATTER[x.device.kind](out, src, idx, d, add, name)
    return out


def scatter(x: Array, dim: int, index: Array, src: Array, /) -> Array:
    """A copy of ``x`` with ``src``'s elements written at ``index`` along ``dim`` (PyTorch's scatter).

    Parameters
    ----------
    x : Array
        The array copied.
    dim : int
        The axis indexed.
    index : Array
        Integer positions.
    src : Array
        The values, of x's dtype.

    Returns
    -------
    Array
        A new array: out[index[i][j]][j] = src[i][j] for dim 0; with repeated indices one of the
        writes wins.

    Raises
    ------
    TypeError
        A non-integer index, or src of another dtype.
    IndexError
        An index out of bounds.

    Notes
    -----
    Devices: NumPy on ``cpu``; one kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.zeros(3, device="cpu")
    >>> xp.nn.scatter(x, 0, xp.asarray([2, 0], device="cpu"), xp.asarray([5.0, 7.0], device="cpu"))
    Array([7., 0., 5.], dtype=float64, device=cpu)
    """
    return _scatter("scatter", x, dim, index, src, False)


def scatter_add(x: Array, dim: int, index: Array, src: Array, /) -> Array:
    """A copy of ``x`` with ``src``'s elements added at ``index`` along ``dim``; repeated indices add up.

    Parameters
    ----------
    x : Array
        A real-valued array.
    dim : int
        The axis indexed.
    index : Array
        Integer positions.
    src : Array
        The values, of x's dtype.

    Returns
    -------
    Array
        A new array.

    Raises
    ------
    TypeError
        A non-integer index, src of another dtype, or a complex or bool x.
    IndexError
        An index out of bounds.

    Notes
    -----
    Devices: NumPy on ``cpu``; atomic adds on a GPU (16-bit and small integer types widened to 32
    bits), so the order of float additions, and the last bits, may vary between runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.zeros(3, device="cpu")
    >>> xp.nn.scatter_add(x, 0, xp.asarray([1, 1], device="cpu"), xp.asarray([5.0, 7.0], device="cpu"))
    Array([ 0., 12.,  0.], dtype=float64, device=cpu)
    """
    return _scatter("scatter_add", x, dim, index, src, True)


def _along(name: str, index: Array, shape: tuple[int, ...], dim: int) -> Array:
    """The 1-D (or 0-D) ``index`` as a view of ``shape`` that varies along ``dim`` only."""
    if index.ndim > 1:
        raise ValueError(f"nn.{name}(): index must be 0-D or 1-D, got shape {index.shape}")
    step = index.strides[0] if index.ndim else 0
    return index._view(shape, tuple(step if k == dim else 0 for k in range(len(shape))), index.offset)


def index_select(x: Array, dim: int, index: Array, /) -> Array:
    """The entries of ``x`` at the 1-D ``index`` along ``dim``.

    Parameters
    ----------
    x : Array
        The source.
    dim : int
        The axis.
    index : Array
        A 0-D or 1-D integer array.

    Returns
    -------
    Array
        x's shape with ``dim`` of index's length.

    Raises
    ------
    ValueError
        An index that is not 0-D or 1-D.
    IndexError
        An index out of bounds.

    Notes
    -----
    Devices: a gather on x's device.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.index_select(xp.asarray([[1, 2], [3, 4]], device="cpu"), 0, xp.asarray([1], device="cpu"))
    Array([[3, 4]], dtype=int64, device=cpu)
    """
    d, idx = _index("index_select", x, index, dim)
    if x.ndim == 0:
        x = x._view((1,), (1,), x.offset)
    shape = x.shape[:d] + (idx.size,) + x.shape[d + 1:]
    if 0 in shape:
        return memory.empty(shape if index.ndim or x.ndim > 1 else (), x.dtype, x.device)
    out = GATHER[x.device.kind](x, _along("index_select", idx, shape, d), d, "index_select")
    return cast("Array", out if index.ndim or x.ndim > 1 else out._view((), (), out.offset))


def index_add(x: Array, dim: int, index: Array, source: Array, /, *, alpha: int | float = 1) -> Array:
    """A copy of ``x`` with ``alpha * source`` added at ``index`` along ``dim``.

    Parameters
    ----------
    x : Array
        A real-valued array.
    dim : int
        The axis.
    index : Array
        A 1-D integer array.
    source : Array
        x's shape with ``dim`` of index's length.
    alpha : int or float, optional
        Default: 1.

    Returns
    -------
    Array
        A new array; repeated indices add up.

    Raises
    ------
    ValueError
        A source of another shape.
    IndexError
        An index out of bounds.

    Notes
    -----
    Devices: NumPy on ``cpu``; atomic adds on a GPU (see scatter_add).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.index_add(xp.zeros(3, device="cpu"), 0, xp.asarray([0, 0], device="cpu"), xp.asarray([1.0, 2.0], device="cpu"))
    Array([3., 0., 0.], dtype=float64, device=cpu)
    """
    d, idx = _index("index_add", x, index, dim)
    arrays("index_add", x=x, source=source)
    shape = x.shape[:d] + (idx.size,) + x.shape[d + 1:]
    if source.shape != shape:
        raise ValueError(f"nn.index_add(): source has shape {source.shape}, expected {shape}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"nn.index_add(): alpha must be an int or a float, got {type(alpha).__name__}")
    if alpha != 1:
        source = elementwise("multiply")(source, alpha)
    return _scatter("index_add", x, d, _along("index_add", idx, shape, d), source, True, "source")


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f)
                     for f in (gather, scatter, scatter_add, index_select, index_add)]
