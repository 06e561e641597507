"""The docstring of each elementwise function, rendered from its row (``front_ufunc.Ufunc``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocm_array.docstrings import admitted, backs_note, render

from .examples import EXAMPLES

if TYPE_CHECKING:
    from .front_ufunc import Ufunc

#: What each result rule of ``front_ufunc.RESULT_RULES`` gives, in words.
RESULTS = {
    "same": "the promoted dtype of the inputs",
    "bool": "bool",
    "real": "the real dtype of the input's precision for complex input (float32 for complex64), "
            "else the input's dtype",
}


def ufunc_doc(row: Ufunc) -> str:
    names = ("x",) if row.arity == 1 else ("x1", "x2")
    takes = admitted(row.category)
    if row.integers is not None:
        takes += f", or an integer dtype (computed in {row.integers.name})"
    params = [(f"{n} : Array" + (" or Python scalar" if row.arity == 2 else ""),
               f"{'An input' if row.arity == 2 else 'The input'} of {takes}."
               + (" At least one of the two is an array; the other may be a Python or NumPy scalar, "
                  "which takes the array's dtype as the standard says." if row.arity == 2 and n == "x1" else ""))
              for n in names]
    params += [(f"{p} : float", "A parameter of the function: a real number, which reaches it in the dtype "
                                "the function computes in (float32 for float16 and bfloat16 input).")
               for p in getattr(row, "params", ())]  # (a ParamUfunc's)
    shape = "the broadcast shape of the inputs" if row.arity == 2 else "the shape of ``x``"
    returns = f"The result, of {shape}, on the inputs' device. Its dtype: {RESULTS[row.result]}."
    raises = [("TypeError", ("An input dtype it does not admit, " if row.category != "any" else "")
               + "input dtypes without a promoted dtype, or a scalar of a kind the array's dtype does not take.")]
    if row.arity == 2:
        raises.append(("ValueError", "Arrays on different devices, or shapes that do not broadcast."
                                     + (" Also an integer array to a negative Python int power."
                                        if row.scalar_check is not None else "")))
    kernel = f"the ``{row.functor}`` functor of ``rocm_array_kernels/elementwise`` in one kernel over the elements"
    notes = [backs_note(row.numpy, kernel)]
    if row.widen_half:
        notes += ["float16 and bfloat16 are computed in float32 and rounded once to the result."]
    return render(row.doc, [], params, returns, raises, notes, EXAMPLES.get(row.name, ""))
