"""The fresh-process side of the import and first-call cases; prints one JSON line.

``python -m benchmarks.child import LIB``: the time of ``import LIB``.
``python -m benchmarks.child first_call LIB``: after import, GPU discovery and
the upload of two 2^20 float32 arrays, the time of the first ``a + b`` (with its
kernel compile or load) and of the second, each up to the result being ready.
"""

from __future__ import annotations

import importlib
import json
import sys
import time


def _import(name: str) -> dict[str, float]:
    # Nothing else is imported first (not even NumPy): the library pays for all it needs.
    t0 = time.perf_counter()
    importlib.import_module(name)
    return {"import_ms": (time.perf_counter() - t0) * 1e3}


def _first_call(name: str) -> dict[str, float | str]:
    import numpy as np

    from .cases import MISSING, describe
    from .libs import LIBRARIES

    lib = LIBRARIES[name]
    try:
        lib.load()
        rng = np.random.default_rng()
        a, b = (lib.to_device(rng.random(1 << 20, dtype=np.float32), "float32") for _ in range(2))
        lib.synchronize()
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            a + b
            lib.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    except MISSING as e:
        return {"na": describe(e)}
    return {"first_ms": times[0], "second_ms": times[1]}


def main(argv: list[str]) -> int:
    what, name = argv
    print(json.dumps({"import": _import, "first_call": _first_call}[what](name)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
