"""The elementwise plugin's backs tables: device kind -> back.

The fronts look their backs up here. ``cpu.register`` and ``gpu.register`` (with
``gpu_indexing.register``) fill the columns when the plugin is registered, never when a
module is imported, so every table's contents are decided in one place.
"""

from __future__ import annotations

from typing import Any, Callable

from rocm_array.backs import Backs

#: ``(ufunc, arrays, dtype, out_dtype, shape[, out], params=()) -> out``: one row of ``table.py`` on
#: operands already promoted and broadcast; ``params``: a ``ParamUfunc``'s parameter values.
UFUNC = Backs("elementwise functions")
#: device kind -> ``make(ufunc, device, operand kinds, dtype, result dtype)``: a call taking the
#: operands alone (those ``front_ufunc._lane_key`` admits, on ``device``, of those kinds) that does what
#: the back would, resolved once for them; or None where the back gains nothing from one. A tiny
#: op's cost is all host work: this cuts it.
LANES: dict[str, Callable[..., Any]] = {}
#: ``(condition, x1, x2, dtype, shape) -> out``.
WHERE = Backs("where")
#: ``(n, start, step, dtype, device) -> out``: out[i] = start + i*step; exact for an integer dtype with
#: Python int start and step (modulo 2**64, then wrapped into dtype), else computed in float64 /
#: complex128 and cast.
SEQUENCE = Backs("arange/linspace fills")
#: ``(x, k, upper) -> out``: x with the elements below (upper) or above (lower) diagonal k zeroed.
TRIANGLE = Backs("tril/triu")
#: ``(obj, copy) -> Array``: import a DLPack producer living on a device of this kind.
FROM_DLPACK = Backs("DLPack imports")
#: ``(v, indices, shape, in_bounds) -> out``: out[i..., r...] = v[indices[0][i...], ...,
#: indices[k-1][i...], r...]; the indices are integer arrays already broadcast to ``shape``, each to
#: be in ``[-n, n)`` of its axis (IndexError otherwise), which ``in_bounds`` says is known already.
GATHER = Backs("integer-array gathers")
#: ``(v, indices, value, in_bounds) -> None``: the assignment form of GATHER; ``value`` has GATHER's
#: result shape and ``v``'s dtype. With repeated indices, which value lands is unspecified.
SCATTER = Backs("integer-array scatters")
#: ``(mask) -> tuple of int64 1-D arrays``: the coordinates of the True elements, in row-major order.
MASK_INDICES = Backs("boolean-mask indices")

TABLES = (UFUNC, WHERE, SEQUENCE, TRIANGLE, FROM_DLPACK, GATHER, SCATTER, MASK_INDICES)
