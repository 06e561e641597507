"""What each kernel holds on each target, read from the compiled code, and the budget it keeps.

``codeobject``: registers, LDS, scratch and spills from AMD code objects and NVIDIA cubins;
``limits``: each target's compute unit and the waves a SIMD holds of a kernel; ``report``: the rows
the compile check makes of them; ``budget``: the rules CI holds every kernel to; ``page``: the docs
page made from the reports.
"""
