"""The gpu backs of sorting, sets and searchsorted: launches of ``rocm_array_kernels/reduction/sort.hip``.

One LSD radix sort serves them all (see sort.hip for the keys and the passes): a
kernel counts the digits of the keys (made of the values, only read), then one
onesweep kernel per 8-bit digit; the first makes the keys of the values it reads.
``sort`` of one row sorts the keys alone, and its last pass writes them back as values;
``argsort`` and sorts of many rows carry uint32 indices and sort by the row after
the value (a second, stable LSD sort on the row number); an argsort's last pass
writes the int64 result itself. ``unique_*`` sort once, mark where the sorted
values change, scan the marks, and scatter; ``isin`` sorts the second operand and
binary-searches it; ``searchsorted`` binary-searches in the order sort gives (NaNs
last). Only the sizes of data-dependent results (the number of unique values) are
read back to the host.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any, NamedTuple, cast

from rocm_array import dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.devices import Device
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, PerTarget, address, grid_1d, i64, prepare, ptr

from . import backs
from rocm_array.views import moved_back, moved_last

from .gpu import REDUCTION, read_scalar, scan_rows

__all__ = ["SORT_KERNELS", "kernel_sources", "tile_size", "sort", "argsort", "unique", "isin", "searchsorted"]

# The flags of a pass: the order, and how keys are made of a value's bits and where it is read.
_DESCENDING, _CANON_ZERO, _IMAG_PART = 1, 2, 4
_FLOAT, _SIGNED, _BFLOAT, _INTERLEAVED, _GATHER = 8, 16, 32, 64, 128
_RADIX = 256  # digit values, and the onesweep's threads
#: Elements a counting thread loads before using any. A sort of 2^24 float32 on an H200 took 481 us
#: at 8, 474-508 at 16 and 481 at 32 (processes with the same setting differ as much).
_KEY_ITEMS = 16
#: Keys of 4 bytes a onesweep thread holds (8-byte keys: half as many). NVIDIA: 16, measured with the
#: blocks an SM the pass's launch bounds ask (sort.hip's RaOnesweep). CDNA: 8, so that a CU holds
#: more than one tile (64 KiB of LDS: a tile of 16 with its values takes 37 KiB, one block of 4 waves,
#: a wave a SIMD; at 8, 21 KiB: 2 waves a SIMD, keys alone 4). RDNA: 16 (128 KiB a WGP: 6 waves a
#: SIMD with values, 10 without). Chosen from the kernels' resources, not timed on AMD.
_TILE_ITEMS = PerTarget(nvidia=16, cdna=8, rdna=16)
#: Tiles whose published counts a look-back reads at once (a round trip a window), keys alone and
#: with values; NVIDIA's measured on an H200. hiprtc keeps a window of 32 words in scratch (144 bytes
#: a lane: the window's loop ends early when it finds a total); of 16 in registers.
_LOOKBACK_KEYS, _LOOKBACK_PAIRS = 16, PerTarget(nvidia=32, cdna=16, rdna=16)
SORT_KERNELS = Family("reduction/sort.hip", {
    "RA_RADIX": _RADIX, "RA_SORT_BLOCK": _RADIX, "RA_KEY_ITEMS": _KEY_ITEMS, "RA_TILE_ITEMS": _TILE_ITEMS,
    "RA_LOOKBACK_KEYS": _LOOKBACK_KEYS, "RA_LOOKBACK_PAIRS": _LOOKBACK_PAIRS,
    "RA_DESCENDING": _DESCENDING, "RA_CANON_ZERO": _CANON_ZERO, "RA_IMAG_PART": _IMAG_PART,
    "RA_KEY_FLOAT": _FLOAT, "RA_KEY_SIGNED": _SIGNED, "RA_KEY_BFLOAT": _BFLOAT,
    "RA_INTERLEAVED": _INTERLEAVED, "RA_GATHER": _GATHER},
    dict.fromkeys(("sort_counts", "segment_keys", "radix_onesweep"), "RA_SORT_BLOCK"))
_MAX_DIGITS = 8
_STATUS_AT = _MAX_DIGITS * (_RADIX + 1)  # uint32s of the scratch before the status (8-byte aligned)
#: Few blocks for the count kernels: each adds its digit tables to the global one. The same sort:
#: 479 us at 2, 474-508 at 4, 473 at 8, 484 at 16.
_COUNT_BLOCKS_PER_CU = 4
_LIMIT = 2**32  # indices ride along as uint32
_U32 = dtypes.uint32
_COUNT_SCAN = "scan_tiles<uint32_t, uint32_t, uint32_t, ra_red::identity_op, ra_red::add_op>"
_SEGMENT_KEYS = "segment_keys<uint32_t>"


#: The unsigned dtype of each width: kernels read a value as its bits, of that type.
_BITS = {d.itemsize: d for d in (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)}


def _key_dtype(dtype: DType) -> DType:
    real = dtypes.real_of(dtype)
    return dtypes.uint32 if real.itemsize <= 4 else dtypes.uint64


def _recipe(dtype: DType) -> int:
    """The flags that make keys of the bits of ``dtype``'s (real part's) values."""
    real = dtypes.real_of(dtype)
    if real.kind == "f":
        return _FLOAT | (_BFLOAT if real == dtypes.bfloat16 else 0)
    return _SIGNED if real.kind == "i" else 0


class _Keys(NamedTuple):
    """What a sort's first pass reads: ``ptr`` to elements of the unsigned dtype ``bits`` (a
    key dtype: the keys themselves, ``flags`` 0; or of a real dtype's width: values, of which
    ``flags`` make keys)."""

    ptr: ctypes.c_void_p
    bits: DType
    flags: int = 0


def tile_size(device: Device, key: DType) -> int:
    """Keys of the key dtype ``key`` a onesweep tile holds on ``device`` (RaTile's items a thread)."""
    items = SORT_KERNELS.value(device, "RA_TILE_ITEMS")
    return _RADIX * (items if key.itemsize == 4 else items // 2)


def _tiles(device: Device, n: int, key: DType) -> int:
    return -(-n // tile_size(device, key))


@functools.lru_cache(maxsize=None)
def _group(dtype: DType) -> tuple[str, ...]:
    """The sort.hip kernels for one element dtype (those its functions admit)."""
    t = dtype.c_type
    names = [f"sort_gather<{t}>", f"unique_flags<{t}>", f"unique_scatter<{t}>", f"isin_sorted<{t}>"]
    if dtype in CATEGORIES["real-valued"]:
        names.append(f"searchsorted<{t}>")
    return tuple(names)


def _onesweep(kin: DType, kout: DType, values: str) -> tuple[str, str]:
    """The pass reading ``kin`` and writing ``kout`` (unsigned dtypes, see radix_onesweep) and
    ``values``: "void" (keys only), "uint32_t" or "int64_t": its kernel of the full tiles and its
    kernel of the last, partial tile (two programs: each compiles in 40% less time than the two
    in one kernel did, and a first call compiles them at once)."""
    head = f"radix_onesweep<{kin.c_type}, {kout.c_type}, {values}, "
    return head + "true>", head + "false>"


def _flat(passes: list[tuple[str, str]]) -> list[str]:
    return [name for both in passes for name in both]


def _launched(device: Device, passes: list[tuple[str, str]], n: int, key: DType) -> list[str]:
    """The kernels of ``passes`` that a sort of ``n`` keys of ``key`` launches: the full tiles'
    when there is one, the last tile's when it is partial (a first call compiles no other)."""
    full, tail = divmod(n, tile_size(device, key))
    return [name for both in passes for name, used in zip(both, (full > 0, tail > 0)) if used]


def _passes(bits: DType, digits: int, pairs: bool, positions: bool) -> list[tuple[str, str]]:
    """The kernel of each pass of ``_radix`` over keys first read as ``bits``: the first reads
    ``bits``, the rest the key dtype; the last of a keys-only sort writes ``bits`` again, of a sort
    with values and ``positions`` int64 positions."""
    key, kin, names = _key_dtype(bits), bits, []
    for p in range(digits):
        last = p == digits - 1
        values = "void" if not pairs else "int64_t" if last and positions else "uint32_t"
        names.append(_onesweep(kin, bits if last and not pairs else key, values))
        kin = key
    return names


def _count_name(dtype: DType) -> str:
    """The kernel counting the digits of the keys of ``dtype``'s (real parts') values."""
    return f"sort_counts<{_BITS[dtypes.real_of(dtype).itemsize].c_type}>"


def _prepare(device: Device, *names: str, dtype: DType | None = None,
             more: tuple[tuple[Family, str, tuple[str, ...]], ...] = ()) -> None:
    """Make ready the sort.hip kernels ``names`` (common ones, or of ``dtype``'s group) and the
    kernels ``more`` that a call will launch."""
    prepare(device, *((SORT_KERNELS, name, _COMMON if name in _COMMON else _group(cast(DType, dtype)))
                      for name in names), *more)


# The passes sorts take (see _radix): keys only, from the values' width to it through the key
# type (uint32 up to 4 bytes); with values, from the width or the key type to the key type.
_KEYS_ONLY = ((dtypes.uint8, dtypes.uint8), (dtypes.uint16, _U32), (_U32, dtypes.uint16), (_U32, _U32),
              (dtypes.uint64, dtypes.uint64))
_COMMON = (*_flat([_onesweep(i, o, "void") for i, o in _KEYS_ONLY]),
           *_flat([_onesweep(b, _key_dtype(b), v) for b in _BITS.values() for v in ("uint32_t", "int64_t")]),
           *(f"sort_counts<{b.c_type}>" for b in _BITS.values()), _SEGMENT_KEYS, "unique_counts<int64_t>")


def kernel_sources() -> list[KernelSource]:
    return [*SORT_KERNELS.sources([_COMMON, *(_group(d) for d in dtypes.ALL)]), *REDUCTION.sources([(_COUNT_SCAN,)])]


def _launch(device: Device, name: str, group: tuple[str, ...], n: int, args: list[Any]) -> None:
    SORT_KERNELS.launch(device, name, group, grid_1d(n, device), (BLOCK, 1, 1), args)


def _check_size(name: str, n: int) -> None:
    if n >= _LIMIT:
        raise ValueError(f"{name}(): the GPU sort takes fewer than 2**32 elements, got {n}")


# -- the radix sort ---------------------------------------------------------------------------------
def _part(a: Array, start: int, size: int) -> Array:
    return a._view((size,), (1,), a.offset + start)


def _counted(device: Device, name: str, n: int, args: list[Any], key: DType) -> Array:
    """Launch a kernel that counts the digits of keys (``args`` then the counts); returns the
    scratch of their LSD sort, the counts filled, what the first pass reads zeroed (see ``_radix``)."""
    tiles = _tiles(device, n, key)
    scratch = memory.empty((_STATUS_AT + 2 * _RADIX * tiles,), _U32, device)
    memory.fill(_part(scratch, 0, _STATUS_AT + _RADIX * tiles), 0)  # the first pass zeroes the second status array
    grid = min(-(-n // (_RADIX * _KEY_ITEMS)), device.runtime.properties.compute_units * _COUNT_BLOCKS_PER_CU)
    SORT_KERNELS.launch(device, name, _COMMON, (grid, 1, 1), (_RADIX, 1, 1),
                        [*args, ptr(_part(scratch, 0, _MAX_DIGITS * _RADIX))])
    return scratch


def _value_keys(device: Device, x: Array, n: int, flags: int, imag: bool = False) -> tuple[_Keys, Array]:
    """The keys of the (real or ``imag``) parts of ``x``'s values under ``flags``, as the first
    pass reads them, and the scratch of their sort (their digits counted)."""
    real = dtypes.real_of(x.dtype)
    interleaved = _INTERLEAVED if x.dtype.kind == "c" else 0
    first = ctypes.c_void_p(address(x) + (real.itemsize if imag else 0))
    flags |= _recipe(x.dtype) | interleaved
    scratch = _counted(device, _count_name(x.dtype), n, [first, ctypes.c_int64(n), ctypes.c_int32(flags)],
                       _key_dtype(real))
    return _Keys(first, _BITS[real.itemsize], flags), scratch


def _radix(device: Device, scratch: Array, n: int, src: _Keys, digits: int, pairs: bool, vals: Array | None = None,
           out: Array | None = None, length: int = 1) -> Array:
    """The keys ``src`` gives sorted stably on their low ``digits`` bytes; ``scratch`` from
    ``_counted``: every position's digit counts, a tile counter per pass, then the look-back
    status (two uint32 arrays of a word per tile and digit, the passes take turns). Keys
    only: the last pass writes their values to ``out`` (``src``'s values' dtype), returned.
    With ``pairs`` uint32 values ride along (``vals``, or each key's position) and are
    returned (the last pass writes no keys); ``out`` (int64) then takes the last pass's
    values as positions within rows of ``length``."""
    key = _key_dtype(src.bits)
    names = _passes(src.bits, digits, pairs, out is not None)
    tile = tile_size(device, key)
    status = ptr(_part(scratch, _STATUS_AT, scratch.size - _STATUS_AT))
    kin, _, in_flags = src
    spare_keys: list[Array] = []  # the two key buffers the passes between take turns on
    spare_vals = None
    for p in range(digits):
        last = p == digits - 1
        out_flags, kout = 0, None
        if last and not pairs:
            out_flags, kout = src.flags & ~(_INTERLEAVED | _GATHER), out
        elif not last:
            if len(spare_keys) < 2:
                spare_keys.append(memory.empty((n,), key, device))
            kout = spare_keys[p % 2]
        vout = None
        if pairs:
            vout = (out if last and out is not None else spare_vals if spare_vals is not None
                    else memory.empty((n,), _U32, device))
        args = [ptr(kout), ptr(vout), kin, ptr(vals), ctypes.c_int64(n), ctypes.c_int32(p),
                ctypes.c_int32(in_flags), ctypes.c_int32(out_flags), ptr(_part(scratch, p * _RADIX, _RADIX)),
                ptr(_part(scratch, _MAX_DIGITS * _RADIX + p, 1)), status, ctypes.c_uint32(length)]
        # The full tiles, then the last partial one: its look-back finds every earlier tile's
        # counts published, and it takes the next tile from the pass's counter.
        full, tail = divmod(n, tile)
        if full:
            SORT_KERNELS.launch(device, names[p][0], _COMMON, (full, 1, 1), (_RADIX, 1, 1), args)
        if tail:
            SORT_KERNELS.launch(device, names[p][1], _COMMON, (1, 1, 1), (_RADIX, 1, 1), args)
        if kout is not None and not last:
            kin, in_flags = ptr(kout), 0
        if pairs:
            vals, spare_vals = vout, vals
    return vals if pairs else out  # type: ignore[return-value]


def _row_digits(rows: int) -> int:
    """The bytes of a row number below ``rows``: the digits of a row sort's second key."""
    return -(-(rows - 1).bit_length() // 8)


def _argsort_kernels(device: Device, t: DType, n: int, rows: int, positions: bool) -> list[str]:
    """The sort.hip kernels ``_argsort_rows`` launches for ``n`` elements of ``t`` in ``rows``
    rows (``positions``: with ``out``)."""
    bits = _BITS[dtypes.real_of(t).itemsize]
    key = _key_dtype(bits)
    names = [_count_name(t), *_launched(device, _passes(bits, bits.itemsize, True, positions and rows == 1), n, key)]
    if t.kind == "c":  # the imaginary parts' sort comes first, its values uint32 indices
        names += _launched(device, _passes(bits, bits.itemsize, True, False), n, key)
    if rows > 1:
        names += [_SEGMENT_KEYS, *_launched(device, _passes(_U32, _row_digits(rows), True, positions), n, _U32)]
    return names


def _argsort_rows(device: Device, x: Array, length: int, flags: int, out: Array | None = None) -> Array:
    """The stable order sorting each contiguous row of ``length`` of ``x``: uint32 flat indices,
    or with ``out`` (int64) the positions within each row, written there."""
    n, t = x.size, x.dtype
    rows = n // length
    parts = (True, False) if t.kind == "c" else (False,)  # least significant key first: imag, real
    _prepare(device, *_argsort_kernels(device, t, n, rows, out is not None))
    perm: Array | None = None  # the order so far, by the less significant keys
    for i, imag in enumerate(parts):
        src, scratch = _value_keys(device, x, n, flags | (_GATHER if perm is not None else 0), imag)
        final = out if rows == 1 and i == len(parts) - 1 else None
        perm = idx = _radix(device, scratch, n, src, dtypes.real_of(t).itemsize, True, perm, final, length)
    if rows > 1:
        digits = _row_digits(rows)
        seg = memory.empty((n,), _U32, device)
        scratch = _counted(device, _SEGMENT_KEYS, n,
                           [ptr(seg), ptr(idx), *i64(n, length), ctypes.c_int32(digits)], _U32)
        idx = _radix(device, scratch, n, _Keys(ptr(seg), _U32), digits, True, idx, out, length)
    return idx


def _sorted(device: Device, x: Array, flags: int) -> Array:
    """The contiguous 1-D ``x`` sorted (keys only for real values, without ``_CANON_ZERO``: a zero's key
    keeps its sign, and the zeros still tie, see sort.hip; complex ones gathered)."""
    n, t = x.size, x.dtype
    out = memory.empty((n,), t, device)
    if t.kind == "c":
        idx = _argsort_rows(device, x, n, flags | _CANON_ZERO)
        _launch(device, f"sort_gather<{t.c_type}>", _group(t), n, [ptr(out), ptr(x), ptr(idx),
                                                                ctypes.c_int64(n)])
        return out
    bits = _BITS[t.itemsize]
    _prepare(device, _count_name(t), *_launched(device, _passes(bits, t.itemsize, False, False), n, _key_dtype(bits)))
    src, scratch = _value_keys(device, x, n, flags)
    return _radix(device, scratch, n, src, t.itemsize, False, out=out)


# -- the backs --------------------------------------------------------------------------------------
def sort(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    device, n = x.device, x.size
    _check_size("sort", n)
    flags = _DESCENDING if descending else 0
    if n == 0:
        return memory.empty(x.shape, x.dtype, x.device)
    xt, order = moved_last(x, axis)
    length = x.shape[axis]
    if length == n:
        out = _sorted(device, xt, flags)
    else:
        idx = _argsort_rows(device, xt, length, flags | _CANON_ZERO)
        out = memory.empty((n,), x.dtype, device)
        _launch(device, f"sort_gather<{x.dtype.c_type}>", _group(x.dtype), n,
                [ptr(out), ptr(xt), ptr(idx), ctypes.c_int64(n)])
    return moved_back(out._view(xt.shape, contiguous_strides(xt.shape), 0), order)


def argsort(x: Array, axis: int, descending: bool, stable: bool) -> Array:
    device, n = x.device, x.size
    _check_size("argsort", n)
    if n == 0:
        return memory.empty(x.shape, dtypes.DEFAULT_INDEX, x.device)
    xt, order = moved_last(x, axis)
    length = x.shape[axis]
    out = memory.empty(xt.shape, dtypes.DEFAULT_INDEX, device)
    _argsort_rows(device, xt, length, (_DESCENDING if descending else 0) | _CANON_ZERO, out)
    return moved_back(out, order)


def unique(x: Array) -> tuple[Array, Array, Array, Array]:
    device, n, t, index = x.device, x.size, x.dtype, dtypes.DEFAULT_INDEX
    _check_size("unique", n)
    if n == 0:
        empty = memory.empty((0,), index, x.device)
        return memory.empty((0,), t, x.device), empty, memory.empty(x.shape, index, x.device), empty
    xc = memory.contiguous(x, t)
    _prepare(device, *_argsort_kernels(device, t, n, 1, False), f"unique_flags<{t.c_type}>",
             f"unique_scatter<{t.c_type}>", "unique_counts<int64_t>", dtype=t,
             more=((REDUCTION, _COUNT_SCAN, (_COUNT_SCAN,)),))
    perm = _argsort_rows(device, xc, n, _CANON_ZERO)
    marks = memory.empty((n,), _U32, device)
    _launch(device, f"unique_flags<{t.c_type}>", _group(t), n,
            [ptr(marks), ptr(xc), ptr(perm), ctypes.c_int64(n)])
    group = memory.empty((n,), _U32, device)
    scan_rows(group, marks, 1, n, _U32)
    count = read_scalar(group, n - 1)
    values = memory.empty((count,), t, device)
    first, starts, counts = (memory.empty((count,), index, device) for _ in range(3))
    inverse = memory.empty(x.shape, index, device)
    _launch(device, f"unique_scatter<{t.c_type}>", _group(t), n,
            [ptr(values), ptr(first), ptr(inverse), ptr(starts), ptr(xc),
             ptr(perm), ptr(group), ptr(marks), ctypes.c_int64(n)])
    _launch(device, "unique_counts<int64_t>", _COMMON, count,
            [ptr(counts), ptr(starts), *i64(count, n)])
    return values, first, inverse, counts


def isin(x1: Array, x2: Array, dtype: DType, invert: bool) -> Array:
    device = x1.device
    a1, a2 = memory.contiguous(x1, dtype), memory.contiguous(x2, dtype)
    _check_size("isin", a2.size)
    if a2.size == 0 or a1.size == 0:
        return memory.full(x1.shape, invert, dtypes.bool, x1.device)
    s = _sorted(device, a2._view((a2.size,), (1,), a2.offset), 0)
    out = memory.empty(x1.shape, dtypes.bool, device)
    _launch(device, f"isin_sorted<{dtype.c_type}>", _group(dtype), a1.size,
            [ptr(out), ptr(a1), ctypes.c_int64(a1.size), ptr(s), ctypes.c_int64(s.size),
             ctypes.c_int32(invert)])
    return out


def searchsorted(x1: Array, x2: Array, dtype: DType, side: str, sorter: Array | None) -> Array:
    device = x1.device
    a, v = memory.contiguous(x1, dtype), memory.contiguous(x2, dtype)
    out = memory.empty(x2.shape, dtypes.DEFAULT_INDEX, device)
    if v.size == 0:
        return out
    order = None if sorter is None else memory.contiguous(sorter, dtypes.DEFAULT_INDEX)
    _launch(device, f"searchsorted<{dtype.c_type}>", _group(dtype), v.size,
            [ptr(out), ptr(a), ctypes.c_int64(a.size), ptr(order), ptr(v),
             ctypes.c_int64(v.size), ctypes.c_int32(side == "right")])
    return out


def register() -> None:
    """Fill the ``gpu`` column of the sort, set and searchsorted tables."""
    backs.SORT["gpu"], backs.ARGSORT["gpu"], backs.UNIQUE["gpu"], backs.ISIN["gpu"] = sort, argsort, unique, isin
    backs.SEARCHSORTED["gpu"] = searchsorted
