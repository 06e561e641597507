"""A spin kernel that holds a stream, so that the events around a call time the GPU's work alone.

Events recorded around a call measure from the moment the GPU reaches the first
event. Without a hold it reaches it at once and then waits for the host to queue
the call: for a call shorter than its own host cost (a 32 MB pooling, a 16-element
add) the figure is the host's time. Queued behind a spin kernel, the events and
the calls between them are all waiting when the GPU gets there (NVIDIA's nvbench
does the same with its blocking kernel). The host's cost is measured on its own by
the ``host`` cases.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["SOURCE", "NAME", "rocm_array_kernel", "cupy_kernel"]

NAME = "rocm_array_bench_hold"
# clock64 counts SM (NVIDIA) or shader (AMD) cycles on both platforms; one thread spins.
SOURCE = f"""
extern "C" __global__ void {NAME}(long long cycles) {{
  const long long start = clock64();
  while (clock64() - start < cycles) {{}}
}}
"""


def rocm_array_kernel(runtime: Any) -> Any:
    """A callable ``hold(cycles)`` on rocm_array's stream, compiled by the runtime's own compiler."""
    from rocm_array.runtime.compiler import compile_program

    c = runtime.compiler
    code, lowered = compile_program(c.rtc, SOURCE, "hold.hip", [NAME], c.options(), c.target)
    module = runtime.driver.module_load(code)
    function = runtime.driver.module_function(module, lowered[NAME])

    def hold(cycles: int) -> None:
        runtime.launch(function, (1, 1, 1), (1, 1, 1), [ctypes.c_int64(cycles)])

    hold.module = module  # type: ignore[attr-defined]  # keeps the module loaded
    return hold


def cupy_kernel(cupy: Any) -> Any:
    """A callable ``hold(cycles)`` on CuPy's current stream."""
    kernel = cupy.RawKernel(SOURCE, NAME)
    return lambda cycles: kernel((1,), (1,), (cupy.int64(cycles),))
