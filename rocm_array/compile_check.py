"""``python -m rocm_array compile-check``: compile every kernel instantiation, without a GPU.

Gathers the programs the project can build (the core's copy kernels and every
plugin's ``rocm_array_kernels`` hook) and compiles each one for each target
through the run-time compiler classes the runtime itself uses: ``HiprtcRtc``
(hiprtc through hip-python, ROCm 6 or later) for wave64 and wave32 AMD
architectures, ``NvrtcRtc`` (NVRTC through cuda-bindings) for sm_90. Neither
needs a driver or a GPU. Exits non-zero, printing the compiler's log, when
anything fails to compile, and when a named target's compiler cannot be loaded.

From the code it compiled it reads what each kernel holds (registers, LDS, scratch, spills:
``rocm_array.occupancy``), computes the waves a SIMD of the target holds of it at the block its
family declares, and checks the budget (``occupancy.budget``): a kernel over it fails the check
too, named with what it holds. ``--resources FILE`` writes that report as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple, Sequence

from .runtime.compiler import CompileError, Compiler, Rtc, compile_program, kernel_source
from .hookspecs import KernelSource
from .occupancy import budget, report
from .runtime import INSTALL, targets

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
_PORTABILITY_NAMES = (
    "wave_sum<float>", "wave_sum<double>", "wave_sum<int>",
    "atomic_sum<int>", "atomic_sum<unsigned int>", "atomic_sum<long long>",
    "atomic_sum<unsigned long long>", "atomic_sum<float>", "atomic_sum<double>",
    "atomic_max<float>", "atomic_max<double>", "atomic_max<int>", "atomic_max<long long>",
    "wave_shuffles<int>", "block_scan_reverse<int>",
)
#: The portability layer's own check (the GPU tests launch it too, at up to 1024 threads a block,
#: block_scan_reverse with 4 bytes of dynamic shared memory a thread).
PORTABILITY = KernelSource("check/portability.hip", _PORTABILITY_NAMES,
                           threads=(1024,) * len(_PORTABILITY_NAMES),
                           shared=tuple(4 * 1024 if n.startswith("block_scan") else 0 for n in _PORTABILITY_NAMES))


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
    """The same instantiations, regrouped per source file, options and kinds of GPU into programs of
    ``chunk`` names (each keeping its declared block).

    Run time compiles small groups (a dtype's kernels); the check only needs every
    instantiation built once per target, and many single-kernel programs cost mostly start-up.
    """
    merged: dict[tuple[str, tuple[str, ...], tuple[str, ...]], dict[str, tuple[int, int] | None]] = {}
    generated = [ks for ks in sources if ks.source is not None]  # (each its own program)
    for ks in sources:
        if ks.source is None:
            declared = zip(ks.threads, ks.shared) if ks.threads else [None] * len(ks.names)
            merged.setdefault((ks.path, ks.options, ks.kinds), {}).update(zip(ks.names, declared))
    out = [*generated]
    for (path, options, kinds), names in merged.items():
        items = list(names.items())
        for i in range(0, len(items), chunk):
            part = items[i:i + chunk]
            blocks = [b for _, b in part if b is not None]
            out.append(KernelSource(path, tuple(n for n, _ in part), options, None, kinds,
                                    *(tuple(zip(*blocks)) if len(blocks) == len(part) else ((), ()))))
    return [*out[len(generated):], *generated]


def _for(target: str, ks: KernelSource) -> bool:
    """Whether ``ks`` is compiled for ``target`` (its kinds of GPU, when it names them)."""
    _, arch, wave = TARGETS[target]
    return not ks.kinds or targets.kind(arch, wave) in ks.kinds


class _Compiled(NamedTuple):
    """One program compiled for one target: seconds, the error log ("" when it compiled), whether it
    came from the cache (a compile of exactly these sources, options and compiler, kept there), and
    the report's rows of its kernels."""

    target: str
    path: str
    names: int
    seconds: float
    error: str
    cached: bool
    rows: list[report.Row]


def _compile_one(target: str, ks: KernelSource, cache: str | None) -> _Compiled:
    """Compile one program for one target, and read what its kernels hold."""
    kind, arch, wave = TARGETS[target]
    rtc = _rtc(kind)
    start = time.perf_counter()
    cached, rows = False, []
    try:
        if cache is None:
            code, lowered = compile_program(rtc, ks.source or kernel_source(ks.path), ks.path, ks.names,
                                            [*rtc.target_options(arch, wave), *ks.options], target)
        else:
            compiler = Compiler(rtc, arch, wave, Path(cache))
            cached = compiler.cached(ks.path, ks.names, ks.options, ks.source)
            program = compiler.compile(ks.path, ks.names, ks.options, ks.source)
            code, lowered = program.code, program.lowered
        error = "" if code else f"{ks.path}: the compiler returned no code"
        if code:
            rows = report.rows(target, ks, code, lowered)
    except CompileError as exc:
        error = str(exc)
    return _Compiled(target, ks.path, len(ks.names), time.perf_counter() - start, error, cached, rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Compile everything for the chosen targets; 0 when all compiled, 1 otherwise."""
    parser = argparse.ArgumentParser(prog="rocm-array compile-check",
                                     description="Compile every kernel instantiation for target "
                                                 "architectures with hiprtc and NVRTC (no GPU needed).")
    parser.add_argument("--target", action="append", choices=sorted(TARGETS),
                        help="a target to compile for (repeatable; default: all of them)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compiler processes")
    parser.add_argument("--path", action="append",
                        help="only the kernels of this file under rocm_array_kernels/, e.g. reduction/sort.hip (repeatable)")
    parser.add_argument("--cache", metavar="DIR",
                        help="keep each program's code in DIR, as the runtime's kernel cache does (keyed by the "
                             "source, headers, options, target and compiler version), and take it from there "
                             "when nothing of that changed; the log counts both")
    parser.add_argument("--resources", metavar="FILE",
                        help="write the resource report (each kernel's registers, LDS, scratch, spills, block and "
                             "waves a SIMD on each target) to FILE as JSON")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    chosen = args.target or list(TARGETS)
    sources = batched([ks for ks in kernel_sources() if not args.path or ks.path in args.path])
    per_target = {t: [ks for ks in sources if _for(t, ks)] for t in chosen}
    total = {t: sum(len(ks.names) for ks in found) for t, found in per_target.items()}
    print(f"compile-check: {len(sources)} programs, {sum(len(ks.names) for ks in sources)} instantiations, "
          f"targets {', '.join(chosen)}")
    versions: dict[str, str] = {}
    for target in chosen:
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
    spent: dict[str, float] = dict.fromkeys(chosen, 0.0)
    from_cache: dict[str, int] = dict.fromkeys(chosen, 0)
    rows: list[report.Row] = []
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(_compile_one, t, ks, args.cache) for t, found in per_target.items() for ks in found]
        for job in jobs:
            done = job.result()
            spent[done.target] += done.seconds
            from_cache[done.target] += done.cached
            rows.extend(done.rows)
            if done.error:
                failures += 1
                print(f"FAILED {done.target} {done.path} ({done.names} names):\n{done.error}\n")
    compiled = time.perf_counter() - start
    for target in chosen:
        note = f" ({from_cache[target]} of them from {args.cache})" if args.cache else ""
        print(f"  {target}: {len(per_target[target])} programs{note}, {total[target]} instantiations, "
              f"{versions[target]}, {spent[target]:.1f} s of compiler time; {budget.summary(rows, target)}")
    print(f"compile-check: {compiled:.1f} s with {max(1, args.jobs)} processes: "
          + (f"{failures} program(s) FAILED" if failures else "all kernels compiled"))
    if args.resources:
        report.write(Path(args.resources), rows)
        print(f"compile-check: the resource report of {len(rows)} kernels is in {args.resources}")
    over = budget.violations(rows)
    for line in over:
        print(f"OVER BUDGET {line}")
    print(f"compile-check: {len(over)} kernel(s) over the resource budget (rocm_array/occupancy/budget.py)"
          if over else "compile-check: every kernel within the resource budget")
    return 1 if failures or over else 0
