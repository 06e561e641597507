"""The gpu backs of the elementwise functions, ``where``, and the arange/linspace and tril/triu fills.

One launch path serves every row of ``table.py``: the row's functor instantiated in the
kernels of ``rocm_array_kernels/elementwise/elementwise.hip`` for the promoted dtype, compiled as
one program per (row, dtype) the first time it is needed. A call picks its layout after
broadcasting: ``contiguous`` (every operand row-major and of the result's shape: 16-byte
vector accesses) or ``strided`` (any strides, dimensions merged first), and passes a
Python scalar operand (and a ``ParamUfunc``'s parameters, as doubles) to the kernel by value.
Resolved kernels are cached per (device, row, dtype, layout), as CuPy's loop table does; a
repeated contiguous call takes the lane made for its operand kinds (``gpu_lanes``), which holds
all of that already; a repeated call over operands not all contiguous (a slice's, a transpose's)
launches the plan made for their kinds (``_StridedPlan``: binary_rows, binary_tiles or strided).
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, NamedTuple, Sequence, cast

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.broadcast import broadcast_view
from rocm_array.devices import Device
from rocm_array.dtypes import ALL, CATEGORIES, DType
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, address, grid_1d, kept, ptr
from rocm_array.memory.gpu import import_dlpack
from rocm_array.runtime.launcher import Launcher
from rocm_array.fusion import active
from rocm_array.runtime.layout import (BLOCKS_PER_CU, MAX_DIMS, MAX_GRID_X, MAX_GRID_Y, TILE, TILE_ROWS,
                                      TILE_THREADS, crosses, ctype_of, geometry, merge_dims, scalar_arg, scalar_value,
                                      vector_width)

from . import backs
from .deferred import defer
from .table import ROWS
from rocm_array.operands import Scalar

from .front_ufunc import RESULT_RULES, ParamUfunc, Ufunc

ELEMENTWISE = Family("elementwise/elementwise.hip", {"RA_TILE": TILE, "RA_TILE_ROWS": TILE_ROWS, "RA_BLOCK": BLOCK},
                     {"binary_tiles": TILE_THREADS})
LAYOUTS = ("contiguous", "strided")
#: The layouts of binary rows only: a matrix and a row or column (_rows), a transposed operand (_tiles).
BINARY_LAYOUTS = ("rows", "tiles")
_INTEGERS = tuple(d for d in ALL if d.kind in "iu")
_COMPLEX = tuple(d for d in ALL if d.kind == "c")


# -- programs: the instantiations compiled together (and listed for the compile check) --------------
@functools.lru_cache(maxsize=None)
def ufunc_names(fn: Ufunc, dtype: DType, layout: str) -> tuple[str, ...]:
    """The kernels of row ``fn`` for inputs of ``dtype`` in one layout: one program (a binary
    row's has one kernel per scalar position ``S``, indexed by it)."""
    head = f"{fn.functor}, {dtype.c_type}, {RESULT_RULES[fn.result](dtype).c_type}"
    if fn.arity == 1:
        return (f"unary_{'params_' if isinstance(fn, ParamUfunc) else ''}{layout}<{head}>",)
    return tuple(f"binary_{layout}<{head}, {s}>" for s in (0, 1, 2))


def _fill_names() -> tuple[str, ...]:
    return (*(f"where_{k}<{d.c_type}>" for d in ALL for k in ("contiguous", "strided")),
            *(f"sequence_int<{d.c_type}>" for d in _INTEGERS),
            *(f"sequence_real<{d.c_type}>" for d in ALL),
            *(f"sequence_complex<{d.c_type}>" for d in _COMPLEX),
            *(f"triangle<{d.c_type}>" for d in ALL))


FILL_NAMES = _fill_names()


def kernel_sources() -> list[KernelSource]:
    return ELEMENTWISE.sources([*(ufunc_names(u, d, layout) for u in ROWS for d in ALL
                                  if d in CATEGORIES[u.category]
                                  for layout in (*LAYOUTS, *(BINARY_LAYOUTS if u.arity == 2 else ()))),
                                FILL_NAMES])


_THREADS = (BLOCK, 1, 1)


def _width(dtype: DType, out_dtype: DType) -> int:
    """Elements a 16-byte access of the wider of input and output holds (the kernels' RaWidth)."""
    return vector_width(max(dtype.itemsize, out_dtype.itemsize))

_INT32 = 2**31 - 1


def narrow(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> ctypes.c_int:
    """A strided kernel's ``narrow`` flag: the count and every operand's offsets fit in 32 bits."""
    fits = all(sum(abs(s) * (n - 1) for n, s in zip(shape, st)) <= _INT32 for st in strides)
    n = 1
    for m in shape:
        n *= m
    return ctypes.c_int(n <= _INT32 and fits)


_ZEROS = {d.name: scalar_arg(d, 0) for d in ALL}
ZERO_BYTES = {name: bytes(v) for name, v in _ZEROS.items()}


def _overlaps(out: Array, a: Array) -> bool:
    """Whether ``a`` shares memory with ``out`` other than element for element (conservative): a
    prefix view broadcast over ``out`` (x += x[:1]) does, though it starts where out does."""
    return memory.overlaps(out, a) and not memory.same_elements(out, a)


#: Operands of at least this many bytes that run across the output's layout are copied first: on
#: an H200, a.T + b (float32) gains 2.3x at 16384^2 and 1.2x at 8192^2, and loses 5% at 4096^2.
ACROSS_MIN = 1 << 27


def _across(a: Array, out: Array) -> bool:
    """Whether ``a`` is large and, dimensions merged, a 2-D transpose of the row-major ``out``.

    The strided kernel would read it one memory sector per element; the copy that ``memory.copy``
    makes goes through the tiled transposing kernel, and the op then reads it contiguously.
    """
    shape = a._shape
    if a._strides == out._strides or shape != out._shape or math.prod(shape) * a._dtype.itemsize < ACROSS_MIN:
        return False
    merged, (so, sa) = merge_dims(shape, out._strides, a._strides)
    return len(merged) == 2 and crosses(so, sa)


# -- elementwise functions ------------------------------------------------------------------------------
def ufunc(fn: Ufunc, arrays: list[Array | Scalar], dtype: DType, out_dtype: DType, shape: tuple[int, ...],
          out: Array | None = None, params: tuple[float, ...] = ()) -> Array:
    if out is None and active():
        deferred = defer(fn, arrays, dtype, out_dtype, shape, params)
        if deferred is not None:
            return deferred
    device = arrays[0]._device
    target = out
    if out is None:
        out = memory.empty(shape, out_dtype, device)
        contiguous = True
    else:
        contiguous = out.is_contiguous
    n = math.prod(shape)
    if n == 0:
        return out
    # One kernel pointer per operand: an Array of the compute dtype (a cast copy replaces it in
    # ``arrays``), or address 0 for a Scalar, whose value the kernel takes as an argument.
    ptrs = [out._buf.ptr + out._offset * out._dtype.itemsize]
    itemsize = dtype.itemsize
    s = 0
    value: Any = None
    strides = out._strides
    for i, a in enumerate(arrays):
        if isinstance(a, Scalar):
            s, value = i + 1, scalar_value(dtype, a.value)
            ptrs.append(0)
            continue
        if a._dtype is not dtype or (target is not None and _overlaps(target, a)) or (fn.arity == 1 and _across(a, out)):
            # Another dtype, a partial overlap with the output, or a layout across the output's (a binary
            # row reads that through binary_tiles): read a copy.
            a = arrays[i] = memory.copy(a, dtype)
        # (a fresh output is contiguous: an operand of its shape and strides is too)
        if contiguous and (a._shape != shape or (a._strides != strides and not a.is_contiguous)):
            contiguous = False
        ptrs.append(a._buf.ptr + a._offset * itemsize)
    doubles = pair(params) if params else ()
    if fn.arity == 2:
        ptrs.append(ZERO_BYTES[dtype.name] if value is None else bytes(value))
    ptrs += doubles
    if not contiguous:
        key = (device._runtime, fn.name, dtype, shape, out._strides, len(doubles),
               *(None if isinstance(a, Scalar) else (a._shape, a._strides) for a in arrays))
        plan = _STRIDED.get(key)
        if plan is None or any(ptrs[k] % 16 for k in plan.aligned):
            ops = [None if isinstance(a, Scalar) else broadcast_view(a, shape) for a in arrays]
            plan = _strided_plan(fn, dtype, out, ops, s, len(doubles))
            if plan is None:
                _pieces(fn, dtype, out, ops, s, ptrs[1 + fn.arity:])
                return out
            kept(_STRIDED, key, plan)
        plan.launch(plan.grid, (*ptrs, *plan.tail))
        return out
    ptrs.append(n)
    launcher = contiguous_kernel(device, fn, dtype, out_dtype, s)[0]
    launcher(grid_1d(n, device, 2 * _width(dtype, out_dtype)), ptrs)
    return out


def pair(params: tuple[float, ...]) -> tuple[float, ...]:
    """A ParamUfunc's parameters as its kernels take them: two (the second 0 for a row of one)."""
    return (*params, 0.0)[:2]


def contiguous_kernel(device: Device, fn: Ufunc, dtype: DType, out_dtype: DType, s: int) -> tuple[Launcher, int, int]:
    """Row ``fn``'s contiguous kernel for ``dtype`` with the scalar at position ``s``, resolved once:
    ``(launcher, per_block, most)``. ``launcher(grid_1d(n, device, 2 * _width(dtype, out_dtype)),
    (out, *operands, (scalar bytes,) n))`` runs it over ``n`` elements; ``per_block`` and ``most`` are
    that grid's terms computed once, for a lane's launch (``gpu_lanes``: the hot path of a + b), which
    applies grid_1d's rule in line, with no call of its own."""
    key = (device._runtime, fn.functor, dtype, s)  # the runtime: Devices compare by kind and index only
    launch = _CONTIGUOUS.get(key)
    if launch is None:
        # Pointers, the scalar's bytes (an array of one element: the kernel's size and alignment) or
        # a ParamUfunc's two parameters, the count.
        argtypes: list[Any] = [ctypes.c_void_p] * (1 + fn.arity)
        if fn.arity == 2:
            argtypes.append(ctype_of(dtype) * 1)
        if isinstance(fn, ParamUfunc):
            argtypes += [ctypes.c_double] * 2
        argtypes.append(ctypes.c_int64)
        names = ufunc_names(fn, dtype, "contiguous")
        launcher = ELEMENTWISE.launcher(device, names[s], names, argtypes, _THREADS)
        launch = _CONTIGUOUS[key] = (launcher, BLOCK * 2 * _width(dtype, out_dtype),
                                     device.runtime.properties.compute_units * BLOCKS_PER_CU)
    return launch


#: (runtime, functor, dtype, scalar position) -> what ``contiguous_kernel`` resolves.
_CONTIGUOUS: dict[tuple[Any, ...], tuple[Launcher, int, int]] = {}


class _StridedPlan(NamedTuple):
    """A launch of a row over operands of one kind not all contiguous (binary_rows, binary_tiles or
    the strided kernel), resolved once (``_strided_plan``): the launcher, its grid, the arguments after
    the addresses, the scalar and the parameters (counts, the geometry's bytes, flags), and the
    addresses (0: the result's, k: operand k's) it reads as vectors, which must be on a 16-byte
    boundary."""

    launch: Launcher
    grid: tuple[int, int, int]
    tail: tuple[Any, ...]
    aligned: tuple[int, ...] = ()


#: (runtime, row's name, dtype, shape, the result's strides, parameters, and each operand's shape and
#: strides, or None for the scalar) -> its plan. Without one, each call of a row over operands not all
#: contiguous merged the dimensions, built the geometry and made every argument a ctypes value: an
#: ``x.T + 1`` of 4096x1024 float32 (binary_tiles) took 201,419 instructions over a recording driver,
#: 86,626 with it (``.diag/cg_rows.sh``).
_STRIDED: dict[tuple[Any, ...], _StridedPlan] = {}


def _strided_plan(fn: Ufunc, dtype: DType, out: Array, ops: list[Array | None], s: int,
                  doubles: int) -> _StridedPlan | None:
    """The plan of row ``fn`` over the operands ``ops`` (broadcast to out's shape; None: the scalar at
    position ``s``) with ``doubles`` parameters, into ``out``; None where the dimensions, merged, are
    more than a kernel takes."""
    shape = out.shape
    zeros = (0,) * len(shape)
    merged, strides = merge_dims(shape, out.strides, *(zeros if a is None else a.strides for a in ops))
    if len(merged) > MAX_DIMS:
        return None
    head = [ctypes.c_void_p] * (1 + fn.arity) + ([ctype_of(dtype) * 1] if fn.arity == 2 else []) + \
        [ctypes.c_double] * doubles
    if fn.arity == 2:
        plan = _rows(fn, dtype, out, ops, s, head, merged, strides) or _tiles(fn, dtype, out, ops, s, head, merged,
                                                                              strides)
        if plan is not None:
            return plan
    names = ufunc_names(fn, dtype, "strided")
    g = geometry(merged, *strides)
    launch = ELEMENTWISE.launcher(out.device, names[s], names, [*head, ctypes.c_int64, type(g), ctypes.c_int],
                                  _THREADS)
    return _StridedPlan(launch, grid_1d(out.size, out.device), (out.size, bytes(g), narrow(merged, strides).value))


def _pieces(fn: Ufunc, dtype: DType, out: Array, ops: list[Array | None], s: int, values: Sequence[Any]) -> None:
    """Row ``fn`` over operands of more dimensions than a kernel takes even after merging: a launch per
    outer index (each plan made and not kept; ``values``: the scalar's bytes and the parameters)."""
    shape = out.shape
    views = [out, *ops]
    for i in range(shape[0]):
        parts = [None if v is None else v._view(shape[1:], v.strides[1:], v.offset + i * v.strides[0]) for v in views]
        part_out = cast(Array, parts[0])
        plan = _strided_plan(fn, dtype, part_out, parts[1:], s, len(values) - (fn.arity == 2))
        if plan is None:
            _pieces(fn, dtype, part_out, parts[1:], s, values)
        else:
            plan.launch(plan.grid, (address(part_out), *(0 if a is None else address(a) for a in parts[1:]), *values,
                                    *plan.tail))


def _rows(fn: Ufunc, dtype: DType, out: Array, ops: list[Array | None], s: int, head: list[Any],
          merged: Sequence[int], strides: Sequence[Sequence[int]]) -> _StridedPlan | None:
    """The plan of binary_rows if the merged geometry is a row-major matrix whose operands are each of
    its shape, a row (strides (0, 1)) or a column (strides (1, 0)), with 16-byte accesses allowed; None
    otherwise (``head``: the argument types before its own)."""
    if len(merged) != 2:
        return None
    rows, cols = merged
    width = _width(dtype, out.dtype)
    full = (cols, 1)
    if tuple(strides[0]) != full or cols % width or address(out) % 16:
        return None
    kinds, aligned = 0, [0]
    for k, (a, st) in enumerate(zip(ops, strides[1:])):
        if a is None:  # the scalar
            continue
        key = tuple(st)
        kind = 0 if key == full else _ROW_KINDS.get(key)
        if kind is None or (kind != 2 and address(a) % 16):
            return None
        if kind != 2:
            aligned.append(k + 1)
        kinds |= kind << 2 * k
    names = ufunc_names(fn, dtype, "rows")
    device = out.device
    across = -(-cols // width // BLOCK)  # blocks over a row's vectors
    down = max(1, min(rows, device.runtime.properties.compute_units * BLOCKS_PER_CU // across, MAX_GRID_Y))
    launch = ELEMENTWISE.launcher(device, names[s], names, [*head, ctypes.c_int64, ctypes.c_int64, ctypes.c_int],
                                  _THREADS)
    return _StridedPlan(launch, (min(across, MAX_GRID_X), down, 1), (rows, cols, kinds), tuple(aligned))


def _tiles(fn: Ufunc, dtype: DType, out: Array, ops: list[Array | None], s: int, head: list[Any],
           merged: Sequence[int], strides: Sequence[Sequence[int]]) -> _StridedPlan | None:
    """The plan of binary_tiles if the merged geometry is a row-major matrix and an operand runs across
    it (fast along the rows: a transpose); None otherwise. That operand is read through a shared-memory
    tile, coalesced, where the strided kernel reads a memory sector per element and a copy first costs
    a temporary and two more passes."""
    if len(merged) != 2 or tuple(strides[0]) != (merged[1], 1):
        return None
    tiled = sum(1 << k for k, (a, st) in enumerate(zip(ops, strides[1:])) if a is not None and crosses(strides[0], st))
    if not tiled:
        return None
    rows, cols = merged
    names = ufunc_names(fn, dtype, "tiles")
    block = (TILE, ELEMENTWISE.value(out.device, "RA_TILE_ROWS"), 1)
    launch = ELEMENTWISE.launcher(out.device, names[s], names, [*head, *[ctypes.c_int64] * 6, ctypes.c_int], block)
    return _StridedPlan(launch, (min(-(-cols // TILE), MAX_GRID_Y), min(-(-rows // TILE), MAX_GRID_Y), 1),
                        (rows, cols, *strides[1], *strides[2], tiled))


#: binary_rows's broadcast operand kinds by strides (rocm_array_kernels/elementwise/elementwise.hip's RaRowKind:
#: an operand with the result's strides is 0, full).
_ROW_KINDS: dict[tuple[int, ...], int] = {(0, 1): 1, (1, 0): 2}


# -- where, arange/linspace, tril/triu ----------------------------------------------------------------------
def _fill(device: Device, name: str, n: int, args: list[Any]) -> None:
    ELEMENTWISE.launch(device, name, FILL_NAMES, grid_1d(n, device), _THREADS, args)


def where(condition: Array, x1: Array, x2: Array, dtype: DType, shape: tuple[int, ...]) -> Array:
    device = condition.device
    out = memory.empty(shape, dtype, device)
    if out.size == 0:
        return out
    ops = [condition, *(a if a.dtype is dtype else memory.copy(a, dtype) for a in (x1, x2))]
    key = (device._runtime, dtype, shape, *((a._shape, a._strides) for a in ops))
    plan = _WHERE.get(key)
    if plan is None:
        plan = _where_plan(out, ops)
        if plan is None:  # more dimensions than a kernel takes, merged: read contiguous copies
            ops = [memory.contiguous(broadcast_view(a, shape)) for a in ops]
            plan = cast(_StridedPlan, _where_plan(out, ops))
        else:
            kept(_WHERE, key, plan)
    plan.launch(plan.grid, (address(out), *(address(a) for a in ops), *plan.tail))
    return out


#: (runtime, dtype, shape, and the condition's and the choices' shapes and strides) -> the plan of
#: that where (where_contiguous or where_strided), as ``_STRIDED``'s.
_WHERE: dict[tuple[Any, ...], _StridedPlan] = {}


def _where_plan(out: Array, ops: list[Array]) -> _StridedPlan | None:
    """The plan of ``out = where(*ops)`` (the condition and the choices, of out's dtype); None where
    their dimensions, merged, are more than a kernel takes."""
    shape, n, t, device = out._shape, out.size, out.dtype.c_type, out.device
    pointers = [ctypes.c_void_p] * 4
    if all(a._shape == shape and a.is_contiguous for a in ops):
        return _StridedPlan(ELEMENTWISE.launcher(device, f"where_contiguous<{t}>", FILL_NAMES,
                                                 [*pointers, ctypes.c_int64], _THREADS), grid_1d(n, device), (n,))
    views = [broadcast_view(a, shape) for a in ops]
    merged, strides = merge_dims(shape, out.strides, *(v.strides for v in views))
    if len(merged) > MAX_DIMS:
        return None
    g = geometry(merged, *strides)
    launch = ELEMENTWISE.launcher(device, f"where_strided<{t}>", FILL_NAMES,
                                  [*pointers, ctypes.c_int64, type(g), ctypes.c_int], _THREADS)
    return _StridedPlan(launch, grid_1d(n, device), (n, bytes(g), narrow(merged, strides).value))


def sequence(n: int, start: int | float | complex, step: int | float | complex, dtype: DType,
             device: Device) -> Array:
    """``backs.SEQUENCE``: out[i] = start + i*step, as the cpu back computes it."""
    out = memory.empty((n,), dtype, device)
    if n == 0:
        return out
    t = dtype.c_type
    args: list[Any]
    if dtype.kind in "iu" and isinstance(start, int) and isinstance(step, int):
        name, args = f"sequence_int<{t}>", [ctypes.c_uint64(start % 2**64), ctypes.c_uint64(step % 2**64)]
    elif isinstance(start, complex) or isinstance(step, complex):
        if dtype.kind == "c":
            name, args = f"sequence_complex<{t}>", [scalar_arg(_COMPLEX[1], start), scalar_arg(_COMPLEX[1], step)]
        else:  # a real dtype keeps the real parts (as NumPy's cast does)
            name, args = f"sequence_real<{t}>", [ctypes.c_double(complex(start).real), ctypes.c_double(complex(step).real)]
    else:
        name, args = f"sequence_real<{t}>", [ctypes.c_double(start), ctypes.c_double(step)]
    _fill(device, name, n, [ptr(out), ctypes.c_int64(n), *args])
    return out


def triangle(x: Array, k: int, upper: bool) -> Array:
    """``backs.TRIANGLE``: x with the elements below (upper) or above (lower) diagonal k zeroed."""
    out = memory.empty(x.shape, x.dtype, x.device)
    n = out.size
    if n == 0:
        return out
    merged, (strides,) = merge_dims(x.shape, x.strides)
    if len(merged) > MAX_DIMS:
        x = memory.contiguous(x)
        merged, (strides,) = merge_dims(x.shape, x.strides)
    rows, cols = x.shape[-2:]
    k = max(-rows - 1, min(k, cols + 1))  # beyond the matrix every k acts alike; keep it in int64
    _fill(x.device, f"triangle<{x.dtype.c_type}>", n,
          [ptr(out), ptr(x), *(ctypes.c_int64(v) for v in (n, rows, cols, k)), ctypes.c_int(upper),
           geometry(merged, strides)])
    return out


def register() -> None:
    """Fill the ``gpu`` column of the plugin's tables (indexing's is ``gpu_indexing.register``)."""
    backs.UFUNC["gpu"], backs.WHERE["gpu"] = ufunc, where
    backs.SEQUENCE["gpu"], backs.TRIANGLE["gpu"], backs.FROM_DLPACK["gpu"] = sequence, triangle, import_dlpack
