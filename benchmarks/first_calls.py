"""The op families of the first-contact cases: each library's first call of one op, in a fresh
process (``python -m benchmarks.child first_call LIB FAMILY``), timed from the call to its result
being ready, after import, GPU discovery and the inputs' upload.

Each entry: the inputs (host arrays, made once per process) and the op per library (``"*"`` for
all, by the namespace ``L.ns``). A missing entry for a library is "n/a" (CuPy has no conv2d).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

Inputs = Callable[[np.random.Generator], tuple[np.ndarray, ...]]
Op = Callable[..., Any]

VECTOR = lambda r: (r.random(1 << 20, dtype=np.float32),)  # noqa: E731
PAIR = lambda r: (r.random(1 << 20, dtype=np.float32), r.random(1 << 20, dtype=np.float32))  # noqa: E731
MATRIX = lambda r: (r.random((1024, 1024), dtype=np.float32),)  # noqa: E731


def _system(r: np.random.Generator) -> tuple[np.ndarray, ...]:
    a = r.random((512, 512))
    return a @ a.T + 512 * np.eye(512), r.random(512)


def _images(r: np.random.Generator) -> tuple[np.ndarray, ...]:
    return r.random((8, 64, 56, 56), dtype=np.float32), r.random((64, 64, 3, 3), dtype=np.float32)


def _small_image(r: np.random.Generator) -> tuple[np.ndarray, ...]:
    return r.random((1, 3, 16, 16), dtype=np.float32), r.random((8, 3, 3, 3), dtype=np.float32)


def _rocm_conv(L: Any, x: Any, w: Any) -> Any:
    return L.ns.nn.conv2d(x, w, padding=1)


def _torch_conv(L: Any, x: Any, w: Any) -> Any:
    return L.ns.nn.functional.conv2d(x, w, padding=1)


def _cupy_softmax(L: Any, x: Any) -> Any:
    import cupyx.scipy.special

    return cupyx.scipy.special.softmax(x, axis=-1)


#: family -> (inputs, {library or "*": op}).
FAMILIES: dict[str, tuple[Inputs, dict[str, Op]]] = {
    "add": (PAIR, {"*": lambda L, a, b: a + b}),
    "exp": (VECTOR, {"*": lambda L, a: L.ns.exp(a)}),
    "sum": (VECTOR, {"*": lambda L, a: L.ns.sum(a)}),
    "mean_axis": (MATRIX, {"*": lambda L, m: L.ns.mean(m, axis=0)}),
    "argmax": (VECTOR, {"*": lambda L, a: L.ns.argmax(a)}),
    "sort": (VECTOR, {"*": lambda L, a: L.ns.sort(a)}),
    "cumulative_sum": (VECTOR, {"rocm_array": lambda L, a: L.ns.cumulative_sum(a),
                                "cupy": lambda L, a: L.ns.cumsum(a), "torch": lambda L, a: L.ns.cumsum(a, 0)}),
    "unique_values": (VECTOR, {"rocm_array": lambda L, a: L.ns.unique_values(a), "*": lambda L, a: L.ns.unique(a)}),
    "boolean_mask": (VECTOR, {"*": lambda L, a: a[a > 0.5]}),
    "astype": (VECTOR, {"rocm_array": lambda L, a: L.ns.astype(a, L.ns.float16),
                        "cupy": lambda L, a: a.astype(L.ns.float16), "torch": lambda L, a: a.to(L.ns.float16)}),
    "matmul": (MATRIX, {"*": lambda L, m: m @ m}),
    "solve": (_system, {"*": lambda L, a, b: L.ns.linalg.solve(a, b)}),
    "fft": (VECTOR, {"*": lambda L, a: L.ns.fft.rfft(a)}),
    "conv2d": (_images, {"rocm_array": _rocm_conv, "torch": _torch_conv}),
    "conv2d_small": (_small_image, {"rocm_array": _rocm_conv, "torch": _torch_conv}),
    "softmax": (MATRIX, {"rocm_array": lambda L, m: L.ns.nn.softmax(m, axis=-1), "cupy": _cupy_softmax,
                         "torch": lambda L, m: L.ns.softmax(m, -1)}),
}

#: The families timed from the start of the process (``child from_start``), not as first-contact cases.
FROM_START = ("conv2d_small",)
#: The families whose first call is mostly a vendor library's (cuBLAS, cuSOLVER, cuFFT, cuDNN) setup.
VENDOR_FAMILIES = ("matmul", "solve", "fft", "conv2d", "conv2d_small")


def op(family: str, lib: str) -> tuple[Inputs, Op | None]:
    inputs, ops = FAMILIES[family]
    return inputs, ops.get(lib, ops.get("*"))


def unavailable(family: str, lib: str) -> str | None:
    """Why ``lib`` has no first call of ``family``; None when it has one."""
    return None if op(family, lib)[1] is not None else f"{lib} has no {family} op"
