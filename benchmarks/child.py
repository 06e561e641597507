"""The fresh-process side of the import and first-call cases; prints one JSON line.

``python -m benchmarks.child import LIB``: the time of ``import LIB``.
``python -m benchmarks.child first_call LIB [FAMILY]``: after import, GPU discovery
and the upload of the family's inputs (``first_calls.FAMILIES``; default ``add``: two
2^20 float32 arrays), the time of the first call (with its kernel compile or load,
library handles, plans) and of the second, each up to the result being ready.
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


def _first_call(name: str, family: str = "add") -> dict[str, float | str]:
    import numpy as np

    from .cases import MISSING, describe
    from .first_calls import op
    from .libs import LIBRARIES

    lib = LIBRARIES[name]
    inputs, call = op(family, name)
    if call is None:
        return {"na": f"{name} has no {family} op"}
    try:
        lib.load()
        args = [lib.to_device(a, a.dtype.name) for a in inputs(np.random.default_rng(0))]
        lib.synchronize()
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            lib.finish(call(lib, *args))
            lib.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    except MISSING as e:
        return {"na": describe(e)}
    return {"first_ms": times[0], "second_ms": times[1]}


def main(argv: list[str]) -> int:
    what, name, *rest = argv
    print(json.dumps({"import": _import, "first_call": _first_call}[what](name, *rest)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
