"""The fft plugin's backs table: device kind -> back.

``cpu.register`` and ``gpu.register`` fill it when the plugin is registered, never when a
module is imported.
"""

from __future__ import annotations

from rocm_array.backs import Backs

#: ``(transform, x, lengths, axes, norm, dtype, out_dtype) -> out``.
TRANSFORM = Backs("Fourier transforms")

TABLES = (TRANSFORM,)
