"""The fresh-process side of the import and first-call cases; prints one JSON line.

``python -m benchmarks.child import LIB``: the time of ``import LIB``.
``python -m benchmarks.child first_call LIB [FAMILY]``: after import, the GPU found and the upload
of the family's inputs (``first_calls.FAMILIES``; default ``add``: two 2^20 float32 arrays), the
time of the first call (with its kernel compile or load, library handles, plans) and of the second,
each up to the result being ready. Nothing else comes between the import and the call: no wait,
no kernel of the harness's own, no waiting for the library's background work, as in a script.
It also prints when the GPU's opening began (``gpu_from``, the import's end) and the first call's
start and end (``call``), on ``time.monotonic()``: CLOCK_MONOTONIC on Linux, one clock for every
process of the machine, so the parent can tell whether another process had the GPU meanwhile.
``python -m benchmarks.child from_start LIB [FAMILY]``: the time from the start of the process to
the first call's result on the host, the import, the GPU's opening and the upload included; and
the import's own time, as ``import`` prints it.
"""

from __future__ import annotations

import time

START = time.perf_counter()  # (before any other import: from_start counts them all)

import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402


def _import(name: str) -> dict[str, float]:
    # Nothing else is imported first (not even NumPy): the library pays for all it needs.
    t0 = time.perf_counter()
    importlib.import_module(name)
    return {"import_ms": (time.perf_counter() - t0) * 1e3}


def _first_call(name: str, family: str = "add") -> dict[str, object]:
    import numpy as np

    from .cases import MISSING, describe
    from .first_calls import op, unavailable
    from .libs import LIBRARIES

    lib = LIBRARIES[name]
    inputs, call = op(family, name)
    if call is None:
        return {"na": unavailable(family, name)}
    try:
        lib.open()
        args = [lib.to_device(a, a.dtype.name) for a in inputs(np.random.default_rng(0))]
        lib.synchronize()
        calls = []
        for _ in range(2):
            t0 = time.monotonic()
            lib.finish(call(lib, *args))
            lib.synchronize()
            calls.append((t0, time.monotonic()))
    except MISSING as e:
        return {"na": describe(e)}
    (t0, t1), (s0, s1) = calls
    return {"first_ms": (t1 - t0) * 1e3, "second_ms": (s1 - s0) * 1e3, "gpu_from": lib.gpu_from, "call": [t0, t1]}


def _from_start(name: str, family: str = "conv2d_small") -> dict[str, object]:
    # The library first, timed as ``import`` times it: the import case reads these processes' figure
    # (processes.Plan), where processes of its own had cost PyTorch's import three times more a run.
    imported = _import(name)
    from .cases import MISSING, describe
    from .first_calls import op, unavailable
    from .libs import LIBRARIES

    inputs, call = op(family, name)
    if call is None:
        return {"na": unavailable(family, name), **imported}
    import numpy as np  # (counted: the user's script imports it too)

    lib = LIBRARIES[name]
    try:
        lib.open()
        args = [lib.to_device(a, a.dtype.name) for a in inputs(np.random.default_rng(0))]
        lib.to_host(call(lib, *args))
    except MISSING as e:
        return {"na": describe(e), **imported}
    return {"first_ms": (time.perf_counter() - START) * 1e3, **imported}


def main(argv: list[str]) -> int:
    what, name, *rest = argv
    print(json.dumps({"import": _import, "first_call": _first_call, "from_start": _from_start}[what](name, *rest)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
