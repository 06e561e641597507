"""The random plugin: Philox4x32-10 streams with bitwise equal draws on every device, their
statistics, independent streams, edge cases and errors."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest
from scipy import special, stats

import rocm_array as xp
from rocm_array_plugins.random import cpu as random_cpu
from rocm_array_plugins.random import icdf

from helpers import host as to_numpy

FLOATS = (xp.float16, xp.bfloat16, xp.float32, xp.float64)
INTS = (xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64)
#: Random123's known answers for Philox4x32-10: (key, stream, counter) -> the block's four words.
KNOWN = [((0, 0), 0, 0, (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
         ((0xFFFFFFFF, 0xFFFFFFFF), 2**64 - 1, 2**64 - 1, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
         ((0xA4093822, 0x299F31D0), 0x03707344_13198A2E, 0x85A308D3_243F6A88,
          (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


def _bits(a: xp.Array) -> np.ndarray:
    h = to_numpy(a)
    return h.view(f"u{h.itemsize}") if h.dtype.kind == "f" or h.dtype.itemsize == 2 else h


@pytest.mark.parametrize("key, stream, counter, words", KNOWN)
def test_philox_known_answers(key: tuple[int, int], stream: int, counter: int, words: tuple[int, ...]) -> None:
    assert tuple(int(w) for w in random_cpu.philox(key, stream, counter, 1)[0]) == words


def test_philox_known_answer_on_the_device(device: str) -> None:
    # integers over the whole uint64 range take a block's last two words as they are
    x = xp.random.default_rng(0).integers(0, 2**64 - 1, size=2, dtype=xp.uint64, endpoint=True, device=device)
    first = KNOWN[0][3]
    assert int(to_numpy(x)[0]) == first[2] | first[3] << 32


DRAWS = {
    "random": lambda g, n, dt, dev: g.random(n, dtype=dt, device=dev),
    "uniform": lambda g, n, dt, dev: g.uniform(-3.0, 5.5, n, dtype=dt, device=dev),
    "standard_normal": lambda g, n, dt, dev: g.standard_normal(n, dtype=dt, device=dev),
    "normal": lambda g, n, dt, dev: g.normal(2.0, 0.5, n, dtype=dt, device=dev),
    "exponential": lambda g, n, dt, dev: g.exponential(3.0, n, dtype=dt, device=dev),
}


@pytest.mark.parametrize("method", sorted(DRAWS))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_same_bits_on_every_device(device: str, method: str, dtype: xp.DType) -> None:
    for seed, n in ((1, 1), (2, 7), (3, 4099), (4, (3, 5, 2))):
        here, there = (DRAWS[method](xp.random.default_rng(seed), n, dtype, d) for d in ("cpu", device))
        assert str(there.device) == device
        np.testing.assert_array_equal(_bits(there), _bits(here), err_msg=f"{method} {dtype} seed {seed}")


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integers_same_bits_on_every_device(device: str, dtype: xp.DType) -> None:
    info = xp.iinfo(dtype)
    for low, high in ((0, 10), (info.min, info.max), (info.min + 1, info.min + 2), (-1 if info.min else 0, 3)):
        a, b = (xp.random.default_rng(7).integers(low, high, size=1001, dtype=dtype, endpoint=True, device=d)
                for d in ("cpu", device))
        np.testing.assert_array_equal(to_numpy(b), to_numpy(a))
        h = to_numpy(a)
        assert h.min() >= low and h.max() <= high


def test_permutation_and_choice_same_on_every_device(device: str) -> None:
    p = [0.5, 0.0, 0.2, 0.3]
    for d in ("cpu", device):
        g = xp.random.default_rng(11)
        got = [g.permutation(50, device=d), g.choice(10, 20, device=d), g.choice(30, 10, replace=False, device=d),
               g.choice(4, 9, p=xp.asarray(p, device=d), device=d),
               g.choice(4, 3, replace=False, p=xp.asarray(p, device=d), device=d),
               g.permutation(xp.reshape(xp.arange(12, device=d), (4, 3)), axis=1)]
        if d == "cpu":
            expected = [to_numpy(r) for r in got]
        else:
            for r, e in zip(got, expected):
                np.testing.assert_array_equal(to_numpy(r), e)


# -- statistics (fixed seeds: the tests are deterministic) ----------------------------------------------
@pytest.mark.parametrize("dtype", (xp.float32, xp.float64), ids=str)
def test_continuous_distributions(device: str, dtype: xp.DType) -> None:
    g = xp.random.default_rng(2024)
    n = 200_000
    u = to_numpy(g.random(n, dtype=dtype, device=device)).astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 4 * math.sqrt(1 / 12 / n) and abs(u.var() - 1 / 12) < 1e-3
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    z = to_numpy(g.normal(1.5, 2.0, n, dtype=dtype, device=device)).astype(np.float64)
    assert abs(z.mean() - 1.5) < 4 * 2.0 / math.sqrt(n) and abs(z.std() - 2.0) < 0.02
    assert abs(stats.skew(z)) < 0.03 and abs(stats.kurtosis(z)) < 0.06
    # standardized first: the distributions' loc/scale arguments take another path under SCIPY_ARRAY_API
    assert stats.kstest((z - 1.5) / 2.0, "norm").pvalue > 1e-3
    e = to_numpy(g.exponential(0.5, n, dtype=dtype, device=device)).astype(np.float64)
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 4 * 0.5 / math.sqrt(n)
    assert stats.kstest(e / 0.5, "expon").pvalue > 1e-3
    w = to_numpy(g.uniform(-2.0, 6.0, n, dtype=dtype, device=device)).astype(np.float64)
    assert w.min() >= -2.0 and w.max() <= 6.0 and stats.kstest((w + 2.0) / 8.0, "uniform").pvalue > 1e-3


def _icdf_words() -> np.ndarray:
    """2 million random words, and the extremes: both ends, both sides of the middle, octave edges."""
    w = np.random.default_rng(0).integers(0, 2**32, 2_000_000, dtype=np.uint64)
    ends = np.arange(4096, dtype=np.uint64)
    edges = np.array([2**31 - 2**k + d for k in range(32) for d in (-1, 0, 1)], dtype=np.int64) % 2**32
    return np.concatenate([w, ends, 2**32 - 1 - ends, 2**31 - 1 - ends, 2**31 + ends,
                           edges.astype(np.uint64)]).astype(np.uint32)


def test_normal_table_is_accurate() -> None:
    """Float32 normal draws (icdf.py's table) against Phi^-1 of each word's p in double precision:
    within 1.15 units in the last place, and 7e-8 absolutely below |z| = 0.68, where p is resolved to
    2^-31 (pairs of words share the midpoint)."""
    w = _icdf_words()
    z = random_cpu._normal_icdf(w).astype(np.float64)
    x = 2 * np.minimum(w, ~w).astype(np.float64) + 1
    x = np.where(x >= 2**31, np.floor(x / 4) * 4 + 2, x)  # octave 0: the pair's midpoint
    exact = special.ndtri(x / 2**33) * np.where(w >= 2**31, -1.0, 1.0)
    err = np.abs(z - exact)
    ulps = err / np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    outer = np.abs(exact) >= 0.68
    assert ulps[outer].max() <= 1.15 and err[~outer].max() <= 7e-8, (ulps[outer].max(), err[~outer].max())
    assert np.array_equal(np.sign(z), np.sign(exact)) and z.min() >= -6.34 and z.max() <= 6.34  # p >= 2^-33
    # the two halves of the words mirror each other bit for bit
    np.testing.assert_array_equal(random_cpu._normal_icdf(~w), -random_cpu._normal_icdf(w))


def test_normal_table_is_generated_from_its_fit() -> None:
    np.testing.assert_array_equal(icdf.table(), np.asarray(icdf.rows(), dtype=np.float32))
    assert icdf.table().shape == (icdf.ROWS, 3)


@pytest.mark.parametrize("dtype", (xp.float16, xp.bfloat16), ids=str)
def test_16_bit_floats(device: str, dtype: xp.DType) -> None:
    g = xp.random.default_rng(5)
    u = to_numpy(g.random(50_000, dtype=dtype, device=device)).astype(np.float64)
    bits = 11 if dtype == xp.float16 else 8
    assert u.min() >= 0 and u.max() < 1 and np.all(u * 2**bits == np.round(u * 2**bits))
    assert abs(u.mean() - 0.5) < 0.01
    z = to_numpy(g.standard_normal(50_000, dtype=dtype, device=device)).astype(np.float64)
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03


@pytest.mark.parametrize("dtype", (xp.int8, xp.int32, xp.uint64), ids=str)
def test_integers_chi_square(device: str, dtype: xp.DType) -> None:
    g = xp.random.default_rng(99)
    x = to_numpy(g.integers(3, 20, size=170_000, dtype=dtype, device=device)).astype(np.int64)
    counts = np.bincount(x - 3, minlength=17)
    assert x.min() == 3 and x.max() == 19 and len(counts) == 17
    assert stats.chisquare(counts).pvalue > 1e-3


def test_integers_edges(device: str) -> None:
    g = xp.random.default_rng(3)
    one = g.integers(5, 6, size=100, device=device)
    assert np.all(to_numpy(one) == 5)
    assert to_numpy(g.integers(-7, -6, endpoint=True, size=50, device=device)).tolist().count(-6) > 0
    # the whole int64 range: a span above 2^32 takes 128 bits per value; the top bit is a fair coin
    big = to_numpy(g.integers(-(2**63), 2**63, size=40_000, device=device))
    assert abs((big < 0).mean() - 0.5) < 0.02 and big.dtype == np.int64
    huge = to_numpy(g.integers(0, 3 * 2**62, size=60_000, dtype=xp.uint64, device=device))
    thirds = np.bincount((huge // np.uint64(2**62)).astype(np.int64), minlength=3)
    assert thirds.size == 3 and stats.chisquare(thirds).pvalue > 1e-3
    assert g.integers(10, size=0, device=device).shape == (0,)
    scalar = g.integers(10, device=device)
    assert scalar.shape == () and 0 <= int(scalar) < 10


def test_shapes_and_empty_draws(device: str) -> None:
    g = xp.random.default_rng(0)
    before = g.state["counter"]
    for f in (g.random, g.standard_normal, g.exponential):
        assert f(size=(0, 3), device=device).shape == (0, 3)
    assert g.state["counter"] == before  # an empty draw uses no blocks
    assert g.random((2, 3, 4), dtype=xp.float32, device=device).shape == (2, 3, 4)
    assert g.normal(size=(), device=device).shape == ()
    assert g.random(device=device).dtype == xp.float64
    state = g.state
    for draw in (lambda: g.random(10**20, device=device), lambda: g.integers(5, size=(2**40, 2**40), device=device),
                 lambda: g.permutation(10**20, device=device)):
        with pytest.raises(MemoryError, match="out of memory"):  # (had been the stream's OverflowError)
            draw()
    assert g.state == state  # and the stream did not move


def test_permutation_and_choice(device: str) -> None:
    g = xp.random.default_rng(8)
    assert sorted(to_numpy(g.permutation(1000, device=device)).tolist()) == list(range(1000))
    x = xp.reshape(xp.arange(20, device=device), (10, 2))
    shuffled = to_numpy(g.permutation(x))
    assert sorted(shuffled[:, 0].tolist()) == list(range(0, 20, 2)) and np.all(shuffled[:, 1] == shuffled[:, 0] + 1)
    assert len(set(to_numpy(g.choice(100, 100, replace=False, device=device)).tolist())) == 100
    p = np.array([0.1, 0.0, 0.6, 0.3])
    c = to_numpy(g.choice(4, 60_000, p=xp.asarray(p, device=device), device=device))
    counts = np.bincount(c, minlength=4)
    assert counts[1] == 0 and stats.chisquare(counts[[0, 2, 3]], 60_000 * p[[0, 2, 3]]).pvalue > 1e-3
    firsts = [int(to_numpy(g.choice(4, 1, replace=False, p=xp.asarray(p, device=device), device=device))[0])
              for _ in range(300)]
    assert 1 not in firsts and firsts.count(2) > firsts.count(0)
    half = xp.asarray([0.5, 0.25, 0.25], dtype=xp.bfloat16, device=device)  # p's own dtype sets the tolerance
    assert sorted(set(to_numpy(g.choice(3, 100, p=half, device=device)).tolist())) == [0, 1, 2]
    both = to_numpy(g.choice(4, 3, replace=False, p=xp.asarray(p, device=device), device=device))
    assert sorted(both.tolist()) == [0, 2, 3]
    a = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    assert g.choice(a, (2, 2), axis=1).shape == (2, 2, 2)
    assert g.choice(a, 1).shape == (1, 3)


# -- streams ------------------------------------------------------------------------------------------
def _words(g: xp.random.Generator, n: int, device: str) -> set[int]:
    return set(to_numpy(g.integers(0, 2**64 - 1, size=n, dtype=xp.uint64, endpoint=True, device=device)).tolist())


def test_spawned_and_jumped_streams_do_not_overlap(device: str) -> None:
    g = xp.random.default_rng(123)
    kids = g.spawn(4)
    more = g.spawn(2)  # a second spawn gives new streams
    pairs = {(k.state["key"], k.state["stream"]) for k in [g, g.jumped(), g.jumped(2), *kids, *more]}
    assert len(pairs) == 9
    n = 1 << 14
    seen: set[int] = set()
    for s in [g, g.jumped(), *kids, *more, *kids[0].spawn(2)]:
        words = _words(s, n, device)
        assert len(words) == n and not (words & seen)
        seen |= words
    again = [k.state for k in xp.random.default_rng(123).spawn(4)]
    assert again == [k.state for k in xp.random.default_rng(123).spawn(4)]  # reproducible


def test_reproducible_pickled_and_thread_safe(device: str) -> None:
    a, b = xp.random.default_rng(77), xp.random.default_rng(77)
    np.testing.assert_array_equal(to_numpy(a.random(10, device=device)), to_numpy(b.random(10, device=device)))
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(to_numpy(a.normal(size=5, device=device)), to_numpy(c.normal(size=5, device=device)))
    g = xp.random.default_rng(1)
    out: list[np.ndarray] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(20):
            r = to_numpy(g.integers(0, 2**64 - 1, size=4, dtype=xp.uint64, endpoint=True, device=device))
            with lock:
                out.append(r)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert g.state["counter"] == 4 * 20 * 4 and len(set(np.concatenate(out).tolist())) == 320


# -- errors ---------------------------------------------------------------------------------------------
def test_bad_arguments() -> None:
    g = xp.random.default_rng(0)
    cases = [
        (lambda: xp.random.default_rng(-1), ValueError, "seed must be in"),
        (lambda: xp.random.default_rng(2**64), ValueError, "seed must be in"),
        (lambda: xp.random.default_rng(1.5), TypeError, "seed must be an int"),
        (lambda: g.random(3, dtype=xp.int32), TypeError, "real floating dtype"),
        (lambda: g.normal(0.0, -1.0, 3), ValueError, "scale must be non-negative"),
        (lambda: g.normal(xp.asarray([0.0]), 1.0, 3), TypeError, "array parameters are not supported"),
        (lambda: g.uniform(0.0, math.inf), ValueError, "must be finite"),
        (lambda: g.integers(0, 5, endpoint="no"), TypeError, "endpoint must be a bool"),
        (lambda: g.integers(5, 5), ValueError, "low >= high"),
        (lambda: g.integers(0, 300, dtype=xp.uint8), ValueError, "out of bounds for uint8"),
        (lambda: g.integers(0, 3, dtype=xp.float32), TypeError, "integer dtype"),
        (lambda: g.integers(0.5, 3), TypeError, "low must be an integer"),
        (lambda: g.random(-1), ValueError, "negative dimensions"),
        (lambda: g.choice(3, 4, replace=False), ValueError, "without replacement"),
        (lambda: g.choice(0, 1), ValueError, "cannot be empty"),
        (lambda: g.choice(3, 2, p=xp.asarray([0.5, 0.6, 0.1])), ValueError, "do not sum to 1"),
        (lambda: g.choice(3, 2, p=xp.asarray([1.5, -0.5, 0.0])), ValueError, "non-negative"),
        (lambda: g.choice(3, 2, p=xp.asarray([0.5, 0.5])), ValueError, "one weight per entry"),
        (lambda: g.choice(3, 3, replace=False, p=xp.asarray([0.5, 0.5, 0.0])), ValueError, "fewer non-zero"),
        (lambda: g.permutation(2.5), TypeError, "must be an int or an Array"),
        (lambda: g.spawn(-1), ValueError, "n_children must be from 0 to 2"),
        (lambda: g.spawn(1.5), TypeError, r"^random\.Generator\.spawn\(\): n_children must be an integer"),
        (lambda: g.spawn(10**20), ValueError, "n_children must be from 0 to 2"),
        (lambda: g.jumped("a"), TypeError, r"^random\.Generator\.jumped\(\): jumps must be an integer"),
        (lambda: g.jumped(2**64), ValueError, "passes the last stream"),  # (it had wrapped onto this stream)
        (lambda: g.choice(3, p="a"), TypeError, r"^random\.choice\(\): p must be an array"),
        (lambda: g.choice(10**20, 3), ValueError, r"^random\.choice\(\): a must be from 0 to 2\*\*63 - 1"),
        (lambda: xp.random.Generator(5), TypeError, "default_rng"),
    ]
    before = g.state
    for call, exc, text in cases:
        with pytest.raises(exc, match=text):
            call()
    assert g.state == before  # a refused draw uses no blocks


def test_plugin_can_be_turned_off_and_is_listed() -> None:
    code = ("import rocm_array as xp\nprint(hasattr(xp, 'random'))\n"
            "try:\n    xp.random\nexcept xp.PluginUnavailableError as e:\n    print('unavailable:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**__import__("os").environ, "ROCM_ARRAY_DISABLE_PLUGINS": "random"})
    assert r.returncode == 0 and r.stdout.startswith("False") and "random" in r.stdout, r.stderr
    listed = subprocess.run([sys.executable, "-m", "rocm_array", "plugins"], capture_output=True, text=True)
    assert "random" in listed.stdout and "random.default_rng" in listed.stdout
