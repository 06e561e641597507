"""What both backs of the random plugin share: Philox4x32-10's constants, the layout of a draw in
its stream, and the constants of the transforms (passed to the kernels, used by the cpu back).

A generator's stream is the sequence of Philox blocks ``philox(key, counter = (c, stream))`` for
c = 0, 1, 2, ... (64-bit counter and stream words). A draw of n values starts at a fresh block:
value j takes words [j*W, j*W + W) of the draw, word w being lane ``w % 4`` of its block
``w // 4``; W is ``words_per_value``. The draw then uses ``blocks(n, W)`` blocks.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

from rocm_array import dtypes
from rocm_array.dtypes import DType

#: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11; Random123's constants): multipliers,
#: Weyl key increments and rounds. The kernels get the multipliers and rounds as -D options
#: (rocm_array_plugins/random/gpu.py) and the keys of every round as an argument (``round_keys``).
PHILOX = {"RA_PHILOX_M0": 0xD2511F53, "RA_PHILOX_M1": 0xCD9E8D57, "RA_PHILOX_W0": 0x9E3779B9,
          "RA_PHILOX_W1": 0xBB67AE85, "RA_PHILOX_ROUNDS": 10}
KERNEL_PHILOX = {k: PHILOX[k] for k in ("RA_PHILOX_M0", "RA_PHILOX_M1", "RA_PHILOX_ROUNDS")}


def round_keys(key: tuple[int, int]) -> list[tuple[int, int]]:
    """The key of each round: (k0 + r W0, k1 + r W1) modulo 2^32, for round r."""
    w0, w1 = PHILOX["RA_PHILOX_W0"], PHILOX["RA_PHILOX_W1"]
    return [((key[0] + r * w0) & 0xFFFFFFFF, (key[1] + r * w1) & 0xFFFFFFFF) for r in range(PHILOX["RA_PHILOX_ROUNDS"])]


_PAIR = ctypes.c_uint32 * 2
_PAIRS = _PAIR * PHILOX["RA_PHILOX_ROUNDS"]


class _RaKey(ctypes.Structure):
    """``RaKey`` of rocm_array_kernels/random/random.hip (defined once: every draw's launch makes one)."""

    _fields_ = [("k", _PAIRS)]


def key_struct(key: tuple[int, int]) -> Any:
    """``RaKey`` of rocm_array_kernels/random/random.hip: the round keys."""
    return _RaKey(_PAIRS(*(_PAIR(*k) for k in round_keys(key))))

#: Polynomial terms per precision. log: 2 atanh(s) with |s| <= 0.172; sin and cos: Taylor on
#: [0, pi/4], for float64's Box-Muller only (the other floats' normal draws use icdf.py's table).
#: Each count makes the truncation error smaller than half an ulp of the result (float32: 6e-8
#: relative; float64: 1.1e-16): the first term left out is 2e-9 (float32) and 6e-19 (float64) of
#: log(m), the next sin term (pi/4)^18/19! = 1e-19, the next cos term (pi/4)^20/20! = 3e-21.
TERMS = {"RA_RNG_LOG32": 4, "RA_RNG_LOG64": 10, "RA_RNG_SIN64": 8, "RA_RNG_COS64": 9}

#: The high part of ln 2 per precision, with trailing zero bits (9 in float32, 32 in float64) so that
#: e * LN2_HI is exact for every exponent of (0, 1]; the low part is the rest of ln 2.
_LN2_HI = {np.float32: 0.693145751953125, np.float64: 6.93147180369123816490e-01}


def _array(c: Any, values: tuple[Any, ...]) -> Any:
    return (c * len(values))(*values)


class Log:
    """log's constants in one precision (float32 or float64), as NumPy scalars."""

    def __init__(self, f: Any, terms: int) -> None:
        self.f = f
        self.sqrt2 = f(math.sqrt(2.0))
        self.ln2_hi = f(_LN2_HI[f])
        self.ln2_lo = f(math.log(2.0) - _LN2_HI[f])
        self.log = tuple(f(1 / (2 * k + 1)) for k in range(1, terms + 1))

    def ctype(self) -> Any:
        """This precision's struct (``RaRngLog`` of rocm_array_kernels/random/random.hip)."""
        c = ctypes.c_float if self.f is np.float32 else ctypes.c_double

        class RaRngLog(ctypes.Structure):
            _fields_ = [("sqrt2", c), ("ln2_hi", c), ("ln2_lo", c), ("log", c * len(self.log))]

        return RaRngLog(self.sqrt2, self.ln2_hi, self.ln2_lo, _array(c, self.log))


class Trig:
    """Box-Muller's sin and cos constants (float64)."""

    def __init__(self, sin: int, cos: int) -> None:
        self.f = np.float64
        self.half_pi = self.f(math.pi / 2)
        self.sin = tuple(self.f((-1) ** k / math.factorial(2 * k + 1)) for k in range(1, sin + 1))
        self.cos = tuple(self.f((-1) ** k / math.factorial(2 * k)) for k in range(1, cos + 1))

    def ctype(self) -> Any:
        """``RaRngTrig`` of rocm_array_kernels/random/random.hip."""
        c = ctypes.c_double

        class RaRngTrig(ctypes.Structure):
            _fields_ = [("half_pi", c), ("sin", c * len(self.sin)), ("cos", c * len(self.cos))]

        return RaRngTrig(self.half_pi, _array(c, self.sin), _array(c, self.cos))


LOG32 = Log(np.float32, TERMS["RA_RNG_LOG32"])
LOG64 = Log(np.float64, TERMS["RA_RNG_LOG64"])
TRIG64 = Trig(TERMS["RA_RNG_SIN64"], TERMS["RA_RNG_COS64"])


def consts() -> Any:
    """``RaRngConsts``: the transforms' constants, the draw kernels' last argument."""
    parts = {"log32": LOG32.ctype(), "log64": LOG64.ctype(), "trig64": TRIG64.ctype()}

    class RaRngConsts(ctypes.Structure):
        _fields_ = [(name, type(v)) for name, v in parts.items()]

    return RaRngConsts(*parts.values())


#: The float dtypes a draw gives, and the integer dtypes of ``integers``.
FLOATS, INTEGERS = dtypes.REAL_FLOATS, dtypes.INTEGERS
#: A span of ``integers`` below this takes 64 random bits per value, else 128.
NARROW_SPAN = 1 << 32


def float_words(dtype: DType) -> int:
    """Words per value of a float draw: two for float64 (53 bits), one for the others."""
    return 2 if dtype is dtypes.float64 else 1


def integer_words(span: int) -> int:
    """Words per value of ``integers`` over ``span + 1`` values."""
    return 2 if span < NARROW_SPAN else 4


def blocks(n: int, words: int) -> int:
    """Philox blocks a draw of ``n`` values of ``words`` words each uses."""
    return -(-n * words // 4)
