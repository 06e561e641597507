"""Side-by-side benchmarks of rocm_array, CuPy and PyTorch on one GPU.

``python -m benchmarks [--cases a,b] [--out DIR]``: see ``benchmarks/README.md``.
The cases are one table (``cases.CASES``); the libraries are adapters with one
interface (``libs.LIBRARIES``); ``measure`` times them and ``report`` prints.
"""
