"""The nn plugin's backs tables: device kind -> back.

``cpu.register`` and ``gpu.register`` fill them when the plugin is registered, never when a
module is imported.
"""

from __future__ import annotations

from rocm_array.backs import Backs

#: ``(x, log) -> out`` over the rows of a 2-D ``x``.
SOFTMAX = Backs("nn.softmax")
#: ``(x, weight, bias, eps, rms) -> out`` over the rows of a 2-D ``x``.
NORM = Backs("nn.layer_norm and nn.rms_norm")
#: ``(spec, x, w) -> out``: a (transposed) convolution of NCHW ``x``.
CONV = Backs("nn convolutions")
#: ``(spec, x, is_max, include_pad) -> out`` over (planes, H, W).
POOL = Backs("nn pooling")
#: ``(spec, x, sh, sw) -> out``: nearest-neighbour upsampling over (planes, H, W).
UPSAMPLE = Backs("nn upsampling")
#: ``(x, index, dim, name) -> out``; ``name``: the front's function, for its IndexError.
GATHER = Backs("nn.gather")
#: ``(out, src, index, dim, add, name) -> None``.
SCATTER = Backs("nn.scatter")

TABLES = (SOFTMAX, NORM, CONV, POOL, UPSAMPLE, GATHER, SCATTER)
