"""``python -m rocm_array compile-check``: compile every kernel instantiation, without a GPU.

Gathers the programs the project can build (the core's copy kernels and every
plugin's ``rocm_array_kernels`` hook) and compiles each one for each target
through the run-time compiler classes the runtime itself uses: ``HiprtcRtc``
(hiprtc through hip-python, ROCm 6 or later) for wave64 and wave32 AMD
architectures, ``NvrtcRtc`` (NVRTC through cuda-bindings) for sm_90. Neither
needs a driver or a GPU. Exits non-zero, printing the compiler's log, when
anything fails to compile, and when a named target's compiler cannot be loaded.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Sequence

from .runtime.compiler import CompileError, Compiler, Rtc, compile_program, kernel_source
from .hookspecs import KernelSource
from .runtime import INSTALL

__all__ = ["main", "kernel_sources", "TARGETS", "PORTABILITY"]

#: target name -> (compiler, architecture, wave size)
TARGETS: dict[str, tuple[str, str, int]] = {
    "gfx90a": ("hiprtc", "gfx90a", 64),  # CDNA2 (MI210, MI250)
    "gfx942": ("hiprtc", "gfx942", 64),  # CDNA3 (MI300)
    "gfx1030": ("hiprtc", "gfx1030", 32),  # RDNA2
    "gfx1100": ("hiprtc", "gfx1100", 32),  # RDNA3
    "sm_90": ("nvrtc", "sm_90", 32),
}
#: The platform whose bindings bring each compiler (what to install when it is missing).
_PLATFORM = {"hiprtc": "amd", "nvrtc": "nvidia"}
#: The portability layer's own check (the GPU tests launch it too).
PORTABILITY = KernelSource("check/portability.hip", (
    "wave_sum<float>", "wave_sum<double>", "wave_sum<int>",
    "atomic_sum<int>", "atomic_sum<unsigned int>", "atomic_sum<long long>",
    "atomic_sum<unsigned long long>", "atomic_sum<float>", "atomic_sum<double>",
    "atomic_max<float>", "atomic_max<double>", "atomic_max<int>", "atomic_max<long long>",
    "wave_shuffles<int>", "block_scan_reverse<int>",
))


def _rtc(kind: str) -> Rtc:
    """The run-time compiler the runtime itself uses; neither needs a driver or a GPU to compile."""
    if kind == "hiprtc":
        from .runtime.amd import HiprtcRtc

        return HiprtcRtc()
    from .runtime.nvidia import NvrtcRtc

    return NvrtcRtc()


def _loaded_library(rtc_name: str) -> str:
    """The file of ``lib<rtc_name>`` this process has loaded ("" if none is found): hiprtc reports
    version 9.0 whatever the ROCm release, and the file's name carries the release."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if f"/lib{rtc_name}" in line}
    except OSError:  # not Linux
        return ""
    return min((p for p in paths if os.path.basename(p).startswith(f"lib{rtc_name}.")), default="")


def kernel_sources() -> list[KernelSource]:
    """Every program the project can build: the core's copy kernels, then each plugin's."""
    from . import plugin_manager
    from .memory import copies

    found = [PORTABILITY, *copies.kernel_sources()]
    for batch in plugin_manager.plugin_manager_hooks().hook.rocm_array_kernels():
        found.extend(batch)
    return found


#: Names per program in the check: large enough that per-program start-up (header parsing)
#: stops dominating, small enough to spread over the compiler processes.
CHUNK = 48


def batched(sources: Sequence[KernelSource], chunk: int = CHUNK) -> list[KernelSource]:
    """The same instantiations, regrouped per source file and options into programs of ``chunk`` names.

    Run time compiles small groups (a dtype's kernels); the check only needs every
    instantiation built once per target, and many single-kernel programs cost mostly start-up.
    """
    merged: dict[tuple[str, tuple[str, ...]], dict[str, None]] = {}
    generated = [ks for ks in sources if ks.source is not None]  # (each its own program)
    for ks in sources:
        if ks.source is None:
            merged.setdefault((ks.path, ks.options), {}).update(dict.fromkeys(ks.names))
    return [*(KernelSource(path, tuple(names)[i:i + chunk], options)
              for (path, options), names in merged.items() for i in range(0, len(names), chunk)), *generated]


def _compile_one(target: str, ks: KernelSource, cache: str | None) -> tuple[str, str, int, float, str, bool]:
    """Compile one program for one target: (target, path, names, seconds, error log or "", whether
    it came from ``cache``: a compile of exactly these sources, options and compiler, kept there)."""
    kind, arch, wave = TARGETS[target]
    rtc = _rtc(kind)
    start = time.perf_counter()
    cached = False
    try:
        if cache is None:
            code, _ = compile_program(rtc, ks.source or kernel_source(ks.path), ks.path, ks.names,
                                      [*rtc.target_options(arch, wave), *ks.options], target)
        else:
            compiler = Compiler(rtc, arch, wave, Path(cache))
            cached = compiler.cached(ks.path, ks.names, ks.options, ks.source)
            code = compiler.compile(ks.path, ks.names, ks.options, ks.source).code
        error = "" if code else f"{ks.path}: the compiler returned no code"
    except CompileError as exc:
        error = str(exc)
    return target, ks.path, len(ks.names), time.perf_counter() - start, error, cached


def main(argv: Sequence[str] | None = None) -> int:
    """Compile everything for the chosen targets; 0 when all compiled, 1 otherwise."""
    parser = argparse.ArgumentParser(prog="rocm-array compile-check",
                                     description="Compile every kernel instantiation for target "
                                                 "architectures with hiprtc and NVRTC (no GPU needed).")
    parser.add_argument("--target", action="append", choices=sorted(TARGETS),
                        help="a target to compile for (repeatable; default: all of them)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compiler processes")
    parser.add_argument("--path", action="append",
                        help="only the kernels of this file under kernels/, e.g. reduction/sort.hip (repeatable)")
    parser.add_argument("--cache", metavar="DIR",
                        help="keep each program's code in DIR, as the runtime's kernel cache does (keyed by the "
                             "source, headers, options, target and compiler version), and take it from there "
                             "when nothing of that changed; the log counts both")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    targets = args.target or list(TARGETS)
    sources = batched([ks for ks in kernel_sources() if not args.path or ks.path in args.path])
    total = sum(len(ks.names) for ks in sources)
    print(f"compile-check: {len(sources)} programs, {total} instantiations, targets {', '.join(targets)}")
    versions: dict[str, str] = {}
    for target in targets:
        kind = TARGETS[target][0]
        try:
            rtc = _rtc(kind)
            versions[target] = f"{rtc.name} {rtc.version()}"
        except Exception as exc:  # a compiler that is not installed fails the check too, never a skip
            print(f"compile-check: {target}: the {kind} compiler is unavailable ({type(exc).__name__}: {exc}); "
                  f"install {INSTALL[_PLATFORM[kind]]}")
            return 1
        library = _loaded_library(rtc.name)
        versions[target] += f" ({library})" if library else ""
    failures = 0
    spent: dict[str, float] = dict.fromkeys(targets, 0.0)
    from_cache: dict[str, int] = dict.fromkeys(targets, 0)
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(_compile_one, t, ks, args.cache) for t in targets for ks in sources]
        for job in jobs:
            target, path, n, seconds, error, cached = job.result()
            spent[target] += seconds
            from_cache[target] += cached
            if error:
                failures += 1
                print(f"FAILED {target} {path} ({n} names):\n{error}\n")
    for target in targets:
        note = f" ({from_cache[target]} of them from {args.cache})" if args.cache else ""
        print(f"  {target}: {len(sources)} programs{note}, {total} instantiations, {versions[target]}, "
              f"{spent[target]:.1f} s of compiler time")
    print(f"compile-check: {time.perf_counter() - start:.1f} s with {max(1, args.jobs)} processes: "
          + (f"{failures} program(s) FAILED" if failures else "all kernels compiled"))
    return 1 if failures else 0
