"""The cpu back of the random plugin: Philox4x32-10 and the transforms in NumPy.

Each function performs rocm_array_kernels/random/random.hip's operations in the same order, each rounded
once (NumPy's float32 and float64 arithmetic and square root are IEEE operations), so a draw
gives the same bits here and on a GPU. Keep the two in step: tests/test_random.py compares them
bit for bit on every device present (the simulator's wave 64 and 32 in CI).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rocm_array.array import Array, wrap_numpy
from rocm_array.dtypes import DType

from . import backs, icdf, streams
from .streams import PHILOX, Log, Trig

_M32 = np.uint64(0xFFFFFFFF)


def philox(key: tuple[int, int], stream: int, counter: int, count: int) -> np.ndarray:
    """Blocks ``counter .. counter + count - 1`` of ``stream``: (count, 4) uint32 words."""
    ctr = np.uint64(counter) + np.arange(count, dtype=np.uint64)  # wraps modulo 2^64, as the kernel
    c0, c1 = (ctr & _M32).astype(np.uint32), (ctr >> np.uint64(32)).astype(np.uint32)
    c2 = np.full(count, stream & 0xFFFFFFFF, np.uint32)
    c3 = np.full(count, stream >> 32, np.uint32)
    m0, m1 = np.uint64(PHILOX["RA_PHILOX_M0"]), np.uint64(PHILOX["RA_PHILOX_M1"])
    for k0, k1 in streams.round_keys(key):
        p0, p1 = c0.astype(np.uint64) * m0, c2.astype(np.uint64) * m1
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)).astype(np.uint32) ^ c1 ^ np.uint32(k0), (p1 & _M32).astype(np.uint32),
                          (p0 >> np.uint64(32)).astype(np.uint32) ^ c3 ^ np.uint32(k1), (p0 & _M32).astype(np.uint32))
    return np.stack([c0, c1, c2, c3], axis=1)


def _words(key: tuple[int, int], stream: int, counter: int, n: int, words: int) -> np.ndarray:
    """The draw's words, flat: ``words`` per value, whole blocks."""
    return philox(key, stream, counter, streams.blocks(n, words)).reshape(-1)


def _pairs(w: np.ndarray) -> np.ndarray:
    """64-bit words from consecutive pairs of 32-bit ones (the first is the low half)."""
    return w[0::2].astype(np.uint64) | (w[1::2].astype(np.uint64) << np.uint64(32))


def _horner(c: tuple[Any, ...], z: np.ndarray) -> np.ndarray:
    p = np.full_like(z, c[-1])
    for coef in c[-2::-1]:
        p = p * z + coef
    return p


def _log(u: np.ndarray, k: Log) -> np.ndarray:
    """random.hip's rng_log: log(u) for normal u in (0, 1]."""
    uint: Any = np.uint32 if k.f is np.float32 else np.uint64
    mantissa, bias = (23, 127) if k.f is np.float32 else (52, 1023)
    bits: np.ndarray = u.view(uint)
    e = (bits >> uint(mantissa)).astype(np.int64) - bias
    one, mask = uint(bias) << uint(mantissa), (uint(1) << uint(mantissa)) - uint(1)
    m = ((bits & mask) | one).view(k.f)
    big = m > k.sqrt2
    m = np.where(big, m * k.f(0.5), m)
    e = e + big
    f = m + k.f(-1)
    s = f / (f + k.f(2))
    z = s * s
    t = (s * z) * _horner(k.log, z)
    log_m = (s + s) + (t + t)
    fe = e.astype(k.f)
    out: np.ndarray = (fe * k.ln2_lo + log_m) + fe * k.ln2_hi
    return out


def _sincos_turns(t: np.ndarray, k: Trig) -> tuple[np.ndarray, np.ndarray]:
    """random.hip's rng_sincos_turns: sin and cos of 2 pi t for t in [0, 1)."""
    t4 = t * k.f(4)
    q = t4.astype(np.int32)
    r = t4 + (-q.astype(k.f))
    flip = r > k.f(0.5)
    r = np.where(flip, k.f(1) + (-r), r)
    x = r * k.half_pi
    z = x * x
    s = x + (x * z) * _horner(k.sin, z)
    c = k.f(1) + z * _horner(k.cos, z)
    sp, cp = np.where(flip, c, s), np.where(flip, s, c)
    sin = np.select([q == 0, q == 1, q == 2], [sp, cp, -sp], -cp)
    cos = np.select([q == 0, q == 1, q == 2], [cp, -sp, -cp], sp)
    return sin, cos


def _units(w: np.ndarray, dtype: DType) -> tuple[np.ndarray, np.ndarray, Log]:
    """u in [0, 1) and u1 in (0, 1] from each value's words, and the precision computed in."""
    unit: Any
    if dtype.itemsize == 8:
        top = _pairs(w) >> np.uint64(11)
        k, unit = streams.LOG64, np.uint64(1)
        scale = k.f(2.0 ** -53)
    else:
        bits = {"float16": 11, "bfloat16": 8}.get(dtype.name, 24)
        top = w >> np.uint32(32 - bits)
        k, unit = streams.LOG32, np.uint32(1)
        scale = k.f(2.0 ** -bits)
    return top.astype(k.f) * scale, (top + unit).astype(k.f) * scale, k


def _normal_icdf(w: np.ndarray) -> np.ndarray:
    """random.hip's rng_normal_icdf: Phi^-1((w + 1/2) / 2^32) from icdf.py's table, as float32."""
    u32 = np.uint32
    upper = (w.view(np.int32) >> 31).view(u32)
    x = ((w << u32(1)) ^ upper) | u32(1)
    c = (32 - np.frexp(x.astype(np.float64))[1]).astype(u32)  # leading zeros: x < 2^(32 - c), exactly
    y = x << c
    k = icdf.table()[(c << u32(icdf.BITS)) | ((y >> u32(31 - icdf.BITS)) & u32(icdf.SEGMENTS - 1))]
    t = (((y >> u32(8 - icdf.BITS)) & u32(0x7FFFFF)) | u32(0x3F800000)).view(np.float32) - np.float32(1)
    z = k[:, 0] + t * (k[:, 1] + t * k[:, 2])
    out: np.ndarray = (z.view(u32) ^ (upper & u32(0x80000000))).view(np.float32)
    return out


def _fill(out: Array, v: np.ndarray) -> None:
    """out's elements from the first out.size of v (cast as astype casts)."""
    np.copyto(out._np, v[:out.size].reshape(out.shape), casting="unsafe")


def draw(op: str, out: Array, key: tuple[int, int], stream: int, counter: int, a: float, b: float) -> None:
    dtype = out.dtype
    w = _words(key, stream, counter, out.size, streams.float_words(dtype))
    if op == "normal" and dtype.itemsize < 8:
        f = np.float32
        _fill(out, f(a) + f(b) * _normal_icdf(w))
        return
    u, u1, k = _units(w, dtype)
    if op == "uniform":
        lo = k.f(a)
        v = lo + (k.f(b) + (-lo)) * u
    elif op == "exponential":
        v = k.f(b) * -_log(u1, k)
    else:  # float64 normal: Box-Muller on pairs (u1 of the first value, t of the second)
        r = np.sqrt(k.f(-2) * _log(u1[0::2], k))
        sin, cos = _sincos_turns(u[1::2], streams.TRIG64)
        z = np.empty_like(u)
        z[0::2], z[1::2] = r * cos, r * sin
        v = k.f(a) + k.f(b) * z
    _fill(out, v)


def _mulhi64(a: np.ndarray, b: np.ndarray | np.uint64) -> np.ndarray:
    """random.hip's rng_mulhi64: the high 64 bits of a * b, from 32-bit halves."""
    s32 = np.uint64(32)
    al, ah, bl, bh = a & _M32, a >> s32, b & _M32, b >> s32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> s32) + (lh & _M32) + (hl & _M32)
    out: np.ndarray = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    return out


def integers(out: Array, key: tuple[int, int], stream: int, counter: int, low: int, span: int) -> None:
    words = streams.integer_words(span)
    x64 = _pairs(_words(key, stream, counter, out.size, words))
    with np.errstate(over="ignore"):
        if words == 2:
            x = _mulhi64(x64, np.uint64(span + 1))
        else:
            lo, hi = x64[0::2], x64[1::2]
            if span == (1 << 64) - 1:
                x = hi
            else:
                r = np.uint64(span + 1)
                top_lo = hi * r
                carry = (top_lo + _mulhi64(lo, r)) < top_lo
                x = _mulhi64(hi, r) + carry.astype(np.uint64)
        v = np.uint64(low % (1 << 64)) + x
    _fill(out, v)


def cumulative_weights(p: Array) -> Array:
    """The running sum of float64 ``p`` in order (np.cumsum adds one element after another)."""
    return wrap_numpy(np.cumsum(p._np, dtype=np.float64))


def register() -> None:
    backs.DRAW["cpu"] = draw
    backs.INTEGERS["cpu"] = integers
    backs.WEIGHTS["cpu"] = cumulative_weights
