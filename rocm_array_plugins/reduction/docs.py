"""The docstrings of the reductions and scans, rendered from their rows (``front_reduction.Reduction``,
``front_cumulative.Scan``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocm_array.docstrings import admitted, backs_note, render

from .examples import EXAMPLES

if TYPE_CHECKING:
    from .front_cumulative import Scan
    from .front_reduction import Reduction

#: What each result rule of ``front_reduction.RESULT_RULES`` gives, in words.
RESULTS = {
    "accumulate": "``dtype`` when given; otherwise bool and integers narrower than the default integer widen "
                  "to it (unsigned ones to uint64), and other dtypes are kept",
    "same": "the input's dtype",
    "float": "``dtype`` when given (a floating dtype); otherwise the default floating dtype (float64) for "
             "integer input, else the input's dtype",
    "bool": "bool",
    "index": "the default index dtype (int64)",
}

_OPTIONS = {
    "dtype": ("dtype : DType, optional", "The result dtype, and the dtype the elements are combined in; "
                                         "NumPy dtypes and scalar types name ours. Default: see Returns."),
    "correction": ("correction : int or float, optional", "Degrees of freedom subtracted from the element "
                   "count: 0 for the population value, 1 for the sample's. Default: 0."),
}


def reduction_doc(row: Reduction) -> str:
    axis = ("axis : int or None, optional", "The axis to reduce; None reduces the flattened array. "
                                            "Negative values count from the end. Default: None.") \
        if row.axis == "one" else \
        ("axis : int, tuple of ints or None, optional", "The axes to reduce; None reduces all of them. "
                                                        "Negative values count from the end. Default: None.")
    params = [("x : Array", f"The input, of {admitted(row.category)}."), axis,
              *(_OPTIONS[o] for o in row.options),
              ("keepdims : bool, optional", "Keep the reduced axes as axes of size 1, so the result "
                                            "broadcasts against ``x``. Default: False.")]
    returns = f"The reduced array, on ``x``'s device. Its dtype: {RESULTS[row.result]}."
    empty = ("An empty reduction gives the identity, " + repr(row.identity) + "."
             if row.identity is not None else "An empty reduction is a ValueError.")
    raises = [("TypeError", "``x`` not an array, " + ("a dtype it does not admit, " if row.category != "any" else "")
               + "an unknown keyword, or a keepdims that is not a bool."),
              ("AxisError", "An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's)."),
              *([("ValueError", "A reduction over no elements (no identity).")] if row.identity is None else [])]
    kernel = (f"the reduction kernel of ``rocm_array_kernels/reduction`` with the functors ``{row.map}``, "
              f"``{row.combine}`` and ``{row.finalize}`` (one pass; a second kernel combines the partial "
              "results of large reductions)")
    notes = [backs_note(row.numpy, kernel), empty]
    if row.accumulate:
        notes.append("float16 and bfloat16 are combined in float32 and rounded once to the result.")
    return render(row.doc, [], params, returns, raises, notes, EXAMPLES.get(row.name, ""))


def scan_doc(row: Scan) -> str:
    params = [("x : Array", "The input, of at least one dimension, of a numeric dtype or bool."),
              ("axis : int or None, optional", "The axis to scan along; None is allowed for a 1-D ``x`` only. "
                                               "Default: None."),
              _OPTIONS["dtype"],
              ("include_initial : bool, optional", f"Start the result with the identity, {row.identity}, so "
                                                   "the scanned axis grows by one. Default: False.")]
    returns = f"The running results, of ``x``'s shape (one longer along ``axis`` with include_initial), on " \
              f"``x``'s device. Their dtype: {RESULTS['accumulate']}."
    raises = [("TypeError", "``x`` not an array, or a dtype that is neither numeric nor bool."),
              ("ValueError", "A 0-D ``x``, or axis None for an ``x`` of more than one dimension.")]
    kernel = f"the scan kernel of ``rocm_array_kernels/reduction`` with the ``{row.combine}`` functor"
    return render(row.doc, [], params, returns, raises, [backs_note(row.numpy, kernel)],
                  EXAMPLES.get(row.name, ""))
