"""The docstring of each transform, rendered from its row (``front_transforms.Transform``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocm_array.docstrings import admitted, render

from .docs_table import ROWS

if TYPE_CHECKING:
    from .front_transforms import Transform


def transform_doc(t: Transform) -> str:
    summary, example = ROWS[t.name]
    category = "real floating" if t.real_input else "floating-point"
    params = [("x : Array", f"The input, of {admitted(category)}"
               + ("; real input is read as complex." if not t.real_input else ".")),
              *((("s : sequence of ints, optional", "Points per transformed axis (cropped or zero-padded); -1 keeps "
                  "an axis's default. Needs ``axes``. Default: the input's lengths" + (
                      ", and 2 * (m - 1) for the last axis" if t.real_output else "") + "."),
                 ("axes : sequence of ints, optional", "The axes to transform. Default: all."))
                if t.ndim else
                (("n : int, optional", "Points of the transform (cropped or zero-padded). Default: the axis's "
                  "length" + (", 2 * (m - 1) for Hermitian input" if t.real_output else "") + "."),
                 ("axis : int, optional", "The axis to transform. Default: -1."))),
              ("norm : {'backward', 'ortho', 'forward'}, optional", "Which direction is scaled by 1/n "
               "('ortho': both by 1/sqrt(n)). Default: 'backward'.")]
    out = "real" if t.real_output else "complex"
    returns = (f"The {out} transform, on ``x``'s device, of the {out} dtype of ``x``'s precision (float16 and "
               "bfloat16 are transformed in single precision).")
    raises = [("TypeError", f"An ``x`` that is not an array of {admitted(category).split(' (')[0]}."),
              ("ValueError", "An unknown norm, a length below 1, ``s`` without ``axes`` or of another length.")]
    notes = ["Devices: NumPy's ``numpy.fft`` on ``cpu``; on a GPU cuFFT (NVIDIA) or hipFFT (AMD), with one plan "
             "per shape, dtype and device kept for later calls."]
    return render(summary, [], params, returns, raises, notes, example)
