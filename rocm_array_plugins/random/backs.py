"""The random plugin's backs tables: device kind -> back.

``cpu.register`` and ``gpu.register`` fill them when the plugin is registered, never when a
module is imported.
"""

from __future__ import annotations

from rocm_array.backs import Backs

#: ``(op, out, key, stream, counter, a, b)``, filling ``out`` (which the front allocates, before it
#: reserves the stream's blocks): ``op`` is "uniform" (a + (b - a) u), "normal" (a + b z) or
#: "exponential" (b E).
DRAW = Backs("random draws")
#: ``(out, key, stream, counter, low, span)``, filling ``out``: integers in [low, low + span].
INTEGERS = Backs("random.integers")
#: ``(p) -> cdf``: the running sum of a 1-D float64 array, in order.
WEIGHTS = Backs("random.choice's weights")

TABLES = (DRAW, INTEGERS, WEIGHTS)
