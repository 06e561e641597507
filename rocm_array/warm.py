"""``python -m rocm_array warm [FAMILY...]``: fill the kernel cache of a GPU, in parallel, so that no
first call compiles. FAMILY narrows it to kernel sources whose path starts with it (``reduction``,
``elementwise``, ``nn/conv``…); every program of the compile check is compiled otherwise.

A program compiled here is a whole group of instantiations, the one a first call looks for before
compiling its own instantiation alone (``GpuRuntime.kernel``).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Sequence

from rocm_array.compile_check import kernel_sources
from rocm_array.hookspecs import KernelSource
from rocm_array.runtime import targets
from rocm_array.runtime.compiler import cache_dir

__all__ = ["main"]


def _compile(job: tuple[KernelSource, str]) -> tuple[str, float, str]:
    from rocm_array import devices

    ks, device = job
    start = time.perf_counter()
    try:
        devices.parse(device).runtime.compile(ks.path, ks.names, ks.options)
        error = ""
    except Exception as exc:  # reported, and the others go on
        error = f"{type(exc).__name__}: {exc}"
    return ks.path, time.perf_counter() - start, error


def programs(families: Sequence[str] = (), kind: str | None = None) -> list[KernelSource]:
    """The compile check's programs of ``rocm_array_kernels/`` whose path starts with one of ``families`` (all
    when empty), for a kind of GPU (``runtime.targets.KINDS``; any when None). Generated programs
    (``source`` set) are left out: each is one example expression, and a user's expressions,
    compiled as they first appear, are others."""
    return [ks for ks in kernel_sources()
            if ks.source is None and (not families or ks.path.startswith(tuple(families)))
            and (kind is None or not ks.kinds or kind in ks.kinds)]


def main(argv: Sequence[str]) -> int:
    """``warm``: compile the programs of ``families`` for one GPU; 1 if any failed or ``--device``
    names no GPU (0, with a note, when the default device is not a GPU: there is nothing to do)."""
    from rocm_array import devices

    first = " ".join(__doc__.split("\n\n")[0].split()).partition(": ")[2]  # (the first paragraph, after its usage)
    parser = argparse.ArgumentParser(prog="rocm-array warm", description=first[:1].upper() + first[1:].replace("``", "")
                                     + " Optional: without a GPU there is nothing to compile, and it says so.")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compiles at once (default: the CPUs)")
    parser.add_argument("--device", default=None, help="the GPU to compile for (default: the default device)")
    parser.add_argument("families", nargs="*", help="kernel source path prefixes (default: all)")
    args = parser.parse_args(list(argv))
    device = devices.parse(args.device) if args.device else devices.default()
    if device.kind != "gpu":
        # Optional, as the README's install block says: no GPU is nothing to do, unless one was named.
        print(f"warm: {device} is not a GPU; nothing to compile ({', '.join(devices.gpu_problems()) or 'no GPU found'})")
        return 1 if args.device else 0
    props = device.runtime.properties
    sources = programs(args.families, targets.kind(props.arch, props.wave_size))
    if not sources:
        print(f"warm: no kernel source starts with {', '.join(args.families)}")
        return 1
    start = time.perf_counter()
    failed = 0
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for path, _, error in pool.map(_compile, [(ks, str(device)) for ks in sources]):
            if error:
                failed += 1
                print(f"FAILED {path}: {error[:2000]}")
    print(f"warm: {len(sources)} programs for {device} in {time.perf_counter() - start:.1f} s, {failed} failed "
          f"(cache: {cache_dir()})")
    return 1 if failed else 0
