"""gather, scatter, scatter_add, index_select and index_add along one dimension (torch's semantics).

Indices are of an integer dtype and must lie in ``[0, size)`` of the indexed
dimension: anything else is an IndexError (on a GPU, found by the kernel and
reported when the call returns). The results are new arrays; ``scatter*`` and
``index_add`` start from a copy of ``x``. index_select / index_add are gather /
scatter_add with the 1-D index broadcast over the other dimensions.
"""

from __future__ import annotations

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
    """out[i][j][k] = x[index[i][j][k]][j][k] for dim 0 (likewise for the others)."""
    d, idx = _index("gather", x, index, dim)
    _fits("gather", "x", idx, x, d)
    if idx.size == 0:
        return memory.empty(idx.shape, x.dtype, x.device)
    return GATHER[x.device.kind](x, idx, d)


def _scatter(name: str, x: Array, dim: int, index: Array, src: Array, add: bool) -> Array:
    d, idx = _index(name, x, index, dim)
    arrays(name, x=x, src=src)
    if src.dtype is not x.dtype:
        raise TypeError(f"nn.{name}(): src has dtype {src.dtype.name}, x {x.dtype.name}; they must match")
    if add and x.dtype not in CATEGORIES["real-valued"]:
        raise TypeError(f"nn.{name}() adds real numbers; got {x.dtype.name}")
    _fits(name, "x", idx, x, d)
    _fits(name, "src", idx, src, None)
    out = memory.empty(x.shape, x.dtype, x.device)
    memory.copy_into(out, x)
    if idx.size:
        SCATTER[x.device.kind](out, src, idx, d, add)
    return out


def scatter(x: Array, dim: int, index: Array, src: Array, /) -> Array:
    """A copy of x with out[index[i][j]][j] = src[i][j] for dim 0 (likewise for the others)."""
    return _scatter("scatter", x, dim, index, src, False)


def scatter_add(x: Array, dim: int, index: Array, src: Array, /) -> Array:
    """A copy of x with out[index[i][j]][j] += src[i][j] for dim 0 (repeated indices add up)."""
    return _scatter("scatter_add", x, dim, index, src, True)


def _along(name: str, index: Array, shape: tuple[int, ...], dim: int) -> Array:
    """The 1-D (or 0-D) ``index`` as a view of ``shape`` that varies along ``dim`` only."""
    if index.ndim > 1:
        raise ValueError(f"nn.{name}(): index must be 0-D or 1-D, got shape {index.shape}")
    step = index.strides[0] if index.ndim else 0
    return index._view(shape, tuple(step if k == dim else 0 for k in range(len(shape))), index.offset)


def index_select(x: Array, dim: int, index: Array, /) -> Array:
    """The entries of x at ``index`` (1-D) along ``dim``."""
    d, idx = _index("index_select", x, index, dim)
    if x.ndim == 0:
        x = x._view((1,), (1,), x.offset)
    shape = x.shape[:d] + (idx.size,) + x.shape[d + 1:]
    if 0 in shape:
        return memory.empty(shape if index.ndim or x.ndim > 1 else (), x.dtype, x.device)
    out = GATHER[x.device.kind](x, _along("index_select", idx, shape, d), d)
    return out if index.ndim or x.ndim > 1 else out._view((), (), out.offset)


def index_add(x: Array, dim: int, index: Array, source: Array, /, *, alpha: int | float = 1) -> Array:
    """A copy of x with out[..., index[j], ...] += alpha * source[..., j, ...] along ``dim``."""
    d, idx = _index("index_add", x, index, dim)
    arrays("index_add", x=x, source=source)
    shape = x.shape[:d] + (idx.size,) + x.shape[d + 1:]
    if source.shape != shape:
        raise ValueError(f"nn.index_add(): source has shape {source.shape}, expected {shape}")
    if alpha != 1:
        source = elementwise("multiply")(source, alpha)
    return _scatter("index_add", x, d, _along("index_add", idx, shape, d), source, True)


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f)
                     for f in (gather, scatter, scatter_add, index_select, index_add)]
