"""The front of the random plugin: ``xp.random.default_rng`` and its ``Generator``.

A Generator holds a Philox key, a stream and the count of blocks its draws have used (host
state, like NumPy's and CuPy's). Each draw checks its arguments, reserves the blocks it needs
(under a lock: threads may share a generator) and hands the key, stream and first block to the
back of the device. The values depend only on those and on the dtype and size, never on the
device, so a seed gives the same bits on ``cpu`` and on every GPU.
"""

from __future__ import annotations

import math
import numbers
import operator
import secrets
import threading
from typing import Any, Sequence, cast

import numpy as np

from rocm_array import devices, dtypes, memory
from rocm_array.array import Array
from rocm_array.axes import flag, integer, normalize_axis, normalize_shape
from rocm_array.dtypes import DType
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise import own as elementwise
from rocm_array_plugins.reduction import own as reduction

from . import backs, cpu, streams

__all__ = ["Generator", "default_rng", "IMPLS"]

_U64 = 1 << 64
#: Xored into the key when a generator derives its children's keys and streams (``spawn``), so
#: that no child's key is a block its parent also draws.
_SPAWN_TAG = (0x5350574E, 0x4B455953)

Size = int | Sequence[int] | None


def _size(name: str, size: Size) -> tuple[int, ...]:
    return () if size is None else normalize_shape(size, f"random.{name}")


def _float_dtype(name: str, dtype: Any) -> DType:
    dt = dtypes.DEFAULT_FLOAT if dtype is None else dtypes.check_dtype(dtype, f"random.{name}")
    if dt not in streams.FLOATS:
        raise TypeError(f"random.{name}(): dtype must be a real floating dtype (float16, bfloat16, float32 or "
                        f"float64), got {dt.name}")
    return dt


def _real(name: str, what: str, value: Any) -> float:
    if isinstance(value, Array) or not isinstance(value, numbers.Real):
        raise TypeError(f"random.{name}(): {what} must be a real number, not {type(value).__name__} (array "
                        f"parameters are not supported: draw the standard distribution and scale it, e.g. "
                        f"loc + scale * rng.standard_normal(size))")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"random.{name}(): {what} must be finite, got {v}")
    return v


class Generator:
    """Draws from a Philox4x32-10 stream: the same numbers on every device.

    Make one with ``xp.random.default_rng(seed)``. Every method takes ``device=`` (default: the
    default device) and returns a new array there; ``size`` is an int or a tuple of ints, and
    ``None`` (the default) gives a 0-D array. Draws of the same seed, method, arguments, dtype
    and size give bitwise equal arrays on ``cpu`` and on any GPU. Independent streams for
    parallel work: ``spawn(n)`` and ``jumped()``. A generator may be shared by threads (each
    draw reserves its blocks under a lock) and pickled (it carries its position).
    """

    def __init__(self, key: tuple[int, int], stream: int = 0, counter: int = 0, children: int = 0) -> None:
        if not (isinstance(key, tuple) and len(key) == 2
                and all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in key)):
            raise TypeError(f"random.Generator(): key must be a tuple of two ints (a Philox key), got {key!r}; "
                            f"make a generator with xp.random.default_rng(seed)")
        self._key = (int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF)
        self._stream = int(stream) % _U64
        self._counter = int(counter)
        self._children = int(children)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"Generator(Philox4x32-10, key=0x{self._key[1]:08x}{self._key[0]:08x}, stream={self._stream}, "
                f"block={self._counter})")

    def __reduce__(self) -> tuple[Any, ...]:
        with self._lock:
            return (Generator, (self._key, self._stream, self._counter, self._children))

    @property
    def state(self) -> dict[str, int]:
        """The generator's position: ``key`` (64-bit), ``stream``, and ``counter`` (blocks used)."""
        with self._lock:
            return {"key": self._key[0] | self._key[1] << 32, "stream": self._stream, "counter": self._counter}

    def _reserve(self, name: str, blocks: int) -> int:
        with self._lock:
            start = self._counter
            if start + blocks > _U64:
                raise OverflowError(f"random.{name}(): this stream has fewer than {blocks} blocks left; draw "
                                    f"from spawn() or jumped() generators")
            self._counter = start + blocks
            return start

    def _draw(self, name: str, op: str, a: float, b: float, size: Size, dtype: Any, device: Any) -> Array:
        dt, shape, dev = _float_dtype(name, dtype), _size(name, size), devices.resolve(device, f"random.{name}")
        out = memory.empty(shape, dt, dev)  # (first: a size past the device is its MemoryError, the stream unmoved)
        start = self._reserve(name, streams.blocks(out.size, streams.float_words(dt)))
        backs.DRAW[dev.kind](op, out, self._key, self._stream, start, a, b)
        return out

    # -- continuous distributions -------------------------------------------------------------------
    def random(self, size: Size = None, dtype: Any = None, *, device: Any = None) -> Array:
        """Uniform in [0, 1): the top 53 (float64), 24 (float32), 11 (float16) or 8 (bfloat16) bits
        of the stream, so every value is a multiple of the dtype's 2^-bits."""
        return self._draw("random", "uniform", 0.0, 1.0, size, dtype, device)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Size = None, dtype: Any = None, *,
                device: Any = None) -> Array:
        """``low + (high - low) * u`` for u uniform in [0, 1), computed in the dtype (float32 for the
        16-bit floats); rounding may give ``high`` itself, as in NumPy."""
        lo, hi = _real("uniform", "low", low), _real("uniform", "high", high)
        if not math.isfinite(hi - lo):
            raise ValueError(f"random.uniform(): high - low overflows ({hi} - {lo})")
        return self._draw("uniform", "uniform", lo, hi, size, dtype, device)

    def standard_normal(self, size: Size = None, dtype: Any = None, *, device: Any = None) -> Array:
        """The standard normal distribution: float32 and the 16-bit floats by the inverse CDF of
        a 32-bit word (a table of quadratics computed in float32; the 16-bit floats rounded from
        it once), float64 by Box-Muller on pairs of 53-bit uniforms."""
        return self._draw("standard_normal", "normal", 0.0, 1.0, size, dtype, device)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Size = None, dtype: Any = None, *,
               device: Any = None) -> Array:
        """``loc + scale * z`` for z standard normal; ``scale`` must be non-negative."""
        mu, sigma = _real("normal", "loc", loc), _real("normal", "scale", scale)
        if sigma < 0:
            raise ValueError(f"random.normal(): scale must be non-negative, got {sigma}")
        return self._draw("normal", "normal", mu, sigma, size, dtype, device)

    def exponential(self, scale: float = 1.0, size: Size = None, dtype: Any = None, *,
                    device: Any = None) -> Array:
        """``scale * -log(u)`` for u uniform in (0, 1]; ``scale`` (1 / rate) must be non-negative."""
        beta = _real("exponential", "scale", scale)
        if beta < 0:
            raise ValueError(f"random.exponential(): scale must be non-negative, got {beta}")
        return self._draw("exponential", "exponential", 0.0, beta, size, dtype, device)

    # -- integers -------------------------------------------------------------------------------------
    def integers(self, low: int, high: int | None = None, size: Size = None, dtype: Any = None,
                 endpoint: bool = False, *, device: Any = None) -> Array:
        """Integers uniform in [low, high) (``endpoint=True``: [low, high]); ``high=None`` means
        [0, low). 64 random bits per value for spans below 2^32, 128 above: the bias of the
        multiply-shift is below 2^-32 and 2^-64 of a value's probability."""
        dt = dtypes.int64 if dtype is None else dtypes.check_dtype(dtype, "random.integers")
        if dt not in streams.INTEGERS:
            raise TypeError(f"random.integers(): dtype must be an integer dtype, got {dt.name}")
        lo, hi = (0, low) if high is None else (low, high)
        for what, v in (("low", lo), ("high", hi)):
            if isinstance(v, (bool, np.bool_, Array)) or not isinstance(v, numbers.Integral):
                raise TypeError(f"random.integers(): {what} must be an integer, not {type(v).__name__}")
        endpoint = flag(endpoint, "random.integers", "endpoint")
        lo, last = operator.index(lo), operator.index(hi) - (0 if endpoint else 1)
        if lo > last:
            raise ValueError(f"random.integers(): low >= high (low={lo}, high={operator.index(hi)}"
                             f"{', endpoint=True' if endpoint else ''}): the range is empty")
        bounds = dtypes.int_bounds(dt)
        if lo < bounds[0] or last > bounds[1]:
            raise ValueError(f"random.integers(): [{lo}, {last}] is out of bounds for {dt.name} "
                             f"[{bounds[0]}, {bounds[1]}]; pass a wider dtype=")
        return self._integers("integers", dt, _size("integers", size), lo, last - lo, devices.resolve(device, "random.integers"))

    def _integers(self, name: str, dt: DType, shape: tuple[int, ...], low: int, span: int, dev: Any) -> Array:
        """Integers in [low, low + span] (checked), after reserving their blocks."""
        out = memory.empty(shape, dt, dev)  # (first, as _draw's)
        start = self._reserve(name, streams.blocks(out.size, streams.integer_words(span)))
        backs.INTEGERS[dev.kind](out, self._key, self._stream, start, low, span)
        return out

    # -- permutations and choices ---------------------------------------------------------------------
    def _order(self, name: str, n: int, device: Any) -> Array:
        """A uniformly random permutation of range(n): a stable sort of n random 64-bit keys."""
        keys = self._integers(name, dtypes.uint64, (n,), 0, _U64 - 1, devices.resolve(device, f"random.{name}"))
        return cast("Array", reduction("argsort")(keys, stable=True))

    def permutation(self, x: int | Array, axis: int = 0, *, device: Any = None) -> Array:
        """A permuted ``arange(x)`` (int64), or a copy of array ``x`` shuffled along ``axis`` (on
        ``x``'s device; ``device`` applies to the int form)."""
        if isinstance(x, Array):
            if x.ndim == 0:
                raise ValueError("random.permutation(): x must have at least one dimension (or be an int)")
            ax = normalize_axis(axis, x.ndim, "random.permutation")
            return cast("Array", elementwise("take")(x, self._order("permutation", x.shape[ax], x.device), axis=ax))
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
            raise TypeError(f"random.permutation(): x must be an int or an Array, not {type(x).__name__}")
        n = operator.index(x)
        if n < 0:
            raise ValueError(f"random.permutation(): x must be non-negative, got {n}")
        return self._order("permutation", n, device)

    def choice(self, a: int | Array, size: Size = None, replace: bool = True, p: Array | None = None,
               axis: int = 0, shuffle: bool = True, *, device: Any = None) -> Array:
        """Samples of ``range(a)`` or of array ``a``'s entries along ``axis``, with or without
        replacement, uniform or with probabilities ``p`` (1-D, non-negative, summing to 1).

        With replacement and ``p``: the inverse of ``p``'s running sum at uniform points. Without
        replacement: the first entries of a random permutation, or (with ``p``) the smallest
        exponential variates divided by their weights, which samples in proportion to ``p``
        successively. ``shuffle`` is accepted for NumPy's signature: the order is random either way.
        """
        del shuffle
        shape = _size("choice", size)
        flag(replace, "random.choice", "replace")
        k = math.prod(shape)
        if isinstance(a, Array):
            if a.ndim == 0:
                raise ValueError("random.choice(): a must be an int or an array of at least one dimension")
            ax = normalize_axis(axis, a.ndim, "random.choice")
            n, dev = a.shape[ax], a.device
        elif isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_)):
            n, ax, dev = operator.index(a), 0, devices.resolve(device, "random.choice")
            if not 0 <= n <= 2**63 - 1:  # (the int64 indices it gives)
                raise ValueError(f"random.choice(): a must be from 0 to 2**63 - 1 (int64 indices), got {n}")
        else:
            raise TypeError(f"random.choice(): a must be an int or an Array, not {type(a).__name__}")
        if n == 0 and k:
            raise ValueError("random.choice(): a cannot be empty unless no samples are taken")
        if not replace and k > n:
            raise ValueError(f"random.choice(): cannot take {k} samples from {n} entries without replacement "
                             f"(replace=False)")
        weights = None if p is None else self._weights(p, n, k, replace, dev)
        idx: Array
        if weights is None and replace:
            idx = (self.integers(0, n, k, device=dev) if n
                   else elementwise("zeros")((0,), dtype=dtypes.int64, device=dev))
        elif weights is None:
            idx = self._order("choice", n, dev)[:k]
        elif replace:
            idx = self._inverse_cdf(weights, n, k)
        else:
            idx = self._successive(weights, n, k)
        if not isinstance(a, Array):
            return cast("Array", elementwise("reshape")(idx, shape))
        out = elementwise("take")(a, idx, axis=ax)
        return cast("Array", elementwise("reshape")(out, a.shape[:ax] + shape + a.shape[ax + 1:]))

    def _weights(self, p: Any, n: int, k: int, replace: bool, device: Any) -> Array:
        """``p`` checked (1-D of length n, non-negative, summing to 1) as float64 on ``device``."""
        try:
            w = p if isinstance(p, Array) else elementwise("asarray")(p, device=device)
        except TypeError as exc:
            raise TypeError(f"random.choice(): p must be an array of probabilities ({exc})") from None
        if w.device != device:
            raise ValueError(f"random.choice(): p is on {w.device}, the samples on {device}; move p with "
                             f"p.to_device({str(device)!r})")
        if w.ndim != 1 or w.shape[0] != n:
            raise ValueError(f"random.choice(): p must be 1-D with one weight per entry ({n}), got shape {w.shape}")
        if w.dtype not in streams.FLOATS:
            raise TypeError(f"random.choice(): p must be a real floating array, got {w.dtype.name}")
        # NumPy's tolerance: sqrt(eps) of float64, or of p's dtype when that is coarser
        tol = math.sqrt(max(float(elementwise("finfo")(w.dtype).eps), float(np.finfo(np.float64).eps)))
        w = elementwise("astype")(w, dtypes.float64)
        if n and float(reduction("min")(w)) < 0:
            raise ValueError("random.choice(): probabilities are not non-negative")
        total = float(reduction("sum")(w))
        if not abs(total - 1.0) <= tol:
            raise ValueError(f"random.choice(): probabilities do not sum to 1 (sum {total!r})")
        if not replace and int(reduction("count_nonzero")(w)) < k:
            raise ValueError(f"random.choice(): fewer non-zero entries in p than the {k} samples asked for "
                             f"without replacement")
        return cast("Array", w)

    def _inverse_cdf(self, w: Array, n: int, k: int) -> Array:
        cdf = backs.WEIGHTS[w.device.kind](w)
        total = cdf[n - 1]
        below = elementwise("nextafter")(total, elementwise("zeros_like")(total))  # u * total < total
        x = elementwise("minimum")(elementwise("multiply")(self.random(k, device=w.device), total), below)
        return cast("Array", reduction("searchsorted")(cdf, x, side="right"))

    def _successive(self, w: Array, n: int, k: int) -> Array:
        e = self.exponential(1.0, n, dtypes.float64, device=w.device)
        positive = elementwise("greater")(w, 0.0)
        keys = elementwise("where")(positive, elementwise("divide")(e, elementwise("where")(positive, w, 1.0)),
                                    math.inf)
        return cast("Array", reduction("argsort")(keys, stable=True)[:k])

    # -- independent streams --------------------------------------------------------------------------
    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` new generators, each with its own key and stream, derived from this one's
        key, stream and a count of children spawned so far (so a second ``spawn`` gives new ones).
        Their draws never share a Philox input with this generator's or with each other's unless two
        derived 128-bit (key, stream) pairs collide."""
        n = integer(n_children, "random.Generator.spawn", "n_children")
        if not 0 <= n <= 2**32:  # (each is a Python object: more would not fit in memory)
            raise ValueError(f"random.Generator.spawn(): n_children must be from 0 to 2**32, got {n}")
        with self._lock:
            first, self._children = self._children, self._children + n
        tagged = (self._key[0] ^ _SPAWN_TAG[0], self._key[1] ^ _SPAWN_TAG[1])
        blocks = cpu.philox(tagged, self._stream, first, n)
        return [Generator((int(b[0]), int(b[1])), int(b[2]) | int(b[3]) << 32) for b in blocks]

    def jumped(self, jumps: int = 1) -> Generator:
        """A generator on stream ``stream + jumps`` of the same key, from its start: its draws and this
        one's use disjoint Philox counters (each stream has 2^64 blocks)."""
        j = integer(jumps, "random.Generator.jumped", "jumps")
        if self._stream + j >= _U64:  # (a stream number wraps at 2**64, back onto this one's)
            raise ValueError(f"random.Generator.jumped(): stream {self._stream} + {j} jumps passes the last "
                             f"stream, 2**64 - 1; spawn() gives generators of new keys")
        if j < 0:
            raise ValueError(f"random.Generator.jumped(): jumps must be non-negative, got {j}")
        return Generator(self._key, self._stream + j)


def default_rng(seed: int | Generator | None = None) -> Generator:
    """A new random Generator: Philox4x32-10, the same numbers on every device.

    Parameters
    ----------
    seed : int, Generator or None, optional
        An integer in [0, 2^64), the generator's 64-bit key; a Generator, returned as it is; or
        None (the default): 64 bits from the operating system's entropy.

    Returns
    -------
    Generator
        With NumPy-Generator-style methods (``random``, ``uniform``, ``standard_normal``, ``normal``,
        ``exponential``, ``integers``, ``permutation``, ``choice``) that take ``size``, ``dtype`` and
        ``device=``, and ``spawn`` and ``jumped`` for independent streams.

    Raises
    ------
    TypeError
        A seed that is not an integer, a Generator or None.
    ValueError
        A negative seed or one of 2^64 or more.

    Notes
    -----
    Philox4x32-10 is counter based: value j of a draw is a function of (key, stream, block), so
    the cpu back (NumPy) and the GPU kernel (``rocm_array_kernels/random/random.hip``) compute the same bits,
    and a draw costs the same wherever it starts. The transforms use the project's own log, sin
    and cos polynomials with every operation rounded once, not the platforms' math libraries.
    The streams differ from NumPy's, CuPy's and PyTorch's generators.

    Examples
    --------
    >>> import rocm_array as xp
    >>> rng = xp.random.default_rng(42)
    >>> rng.integers(0, 10, size=5, device="cpu")
    Array([4, 3, 3, 4, 6], dtype=int64, device=cpu)
    >>> x = rng.standard_normal((2, 3), dtype=xp.float32, device="cpu")
    >>> x.shape, x.dtype
    ((2, 3), rocm_array.float32)
    """
    if isinstance(seed, Generator):
        return seed
    if seed is None:
        value = secrets.randbits(64)
    elif isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"random.default_rng(): seed must be an int in [0, 2**64), a Generator or None, not "
                        f"{type(seed).__name__}")
    else:
        value = operator.index(seed)
        if not 0 <= value < _U64:
            raise ValueError(f"random.default_rng(): seed must be in [0, 2**64), got {value}")
    return Generator((value & 0xFFFFFFFF, value >> 32))


IMPLS: list[Impl] = [Impl("random.default_rng", default_rng), Impl("random.Generator", Generator)]
