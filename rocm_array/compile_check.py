"""``python -m rocm_array compile-check``: compile every kernel instantiation, without a GPU.

Gathers the programs the project can build (the core's copy kernels and every
plugin's ``rocm_array_kernels`` hook) and compiles each one through the real
run-time compilers for each target: hiprtc (ROCm's ``libamdhip64``, called
through ctypes, so no hip-python and no GPU are needed) for a wave64 and a
wave32 AMD architecture, and NVRTC (cuda-bindings) for sm_90. Exits non-zero,
printing the compiler's log, when anything fails to compile.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Sequence

from .runtime.compiler import CompileError, compile_program
from .hookspecs import KernelSource
from .runtime.targets import hiprtc_name, hiprtc_options

__all__ = ["main", "HiprtcCtypes", "kernel_sources", "TARGETS", "PORTABILITY"]

#: target name -> (compiler, architecture, wave size)
TARGETS: dict[str, tuple[str, str, int]] = {
    "gfx90a": ("hiprtc", "gfx90a", 64),
    "gfx1030": ("hiprtc", "gfx1030", 32),
    "sm_90": ("nvrtc", "sm_90", 32),
}
_HIP_LIBRARIES = ("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5")
#: The portability layer's own check (the GPU tests launch it too).
PORTABILITY = KernelSource("check/portability.hip", (
    "wave_sum<float>", "wave_sum<double>", "wave_sum<int>",
    "atomic_sum<int>", "atomic_sum<unsigned int>", "atomic_sum<long long>",
    "atomic_sum<unsigned long long>", "atomic_sum<float>", "atomic_sum<double>",
    "atomic_max<float>", "atomic_max<double>", "atomic_max<int>", "atomic_max<long long>",
))


class HiprtcCtypes:
    """hiprtc called directly in ``libamdhip64`` through ctypes (ROCm 5.2 and later)."""

    name = "hiprtc"

    def __init__(self, library: str | None = None) -> None:
        errors = []
        for lib in [library] if library else [ctypes.util.find_library("amdhip64"), *_HIP_LIBRARIES]:
            if not lib:
                continue
            try:
                self._lib = ctypes.CDLL(lib)
                self.library = lib
                break
            except OSError as exc:
                errors.append(str(exc))
        else:
            raise OSError("no ROCm HIP library (libamdhip64) found: " + "; ".join(errors))
        self._lib.hiprtcGetErrorString.restype = ctypes.c_char_p

    def _call(self, fn: str, *args: Any) -> None:
        err = getattr(self._lib, fn)(*args)
        if err:
            raise RuntimeError(f"{fn} failed: {self._lib.hiprtcGetErrorString(err).decode()}")

    def version(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._call("hiprtcVersion", ctypes.byref(major), ctypes.byref(minor))
        return f"{major.value}.{minor.value} ({os.path.realpath(self.library) if '/' in self.library else self.library})"

    def target_options(self, arch: str, wave_size: int) -> list[str]:
        return hiprtc_options(arch, wave_size)

    def create(self, source: str, filename: str, headers: dict[str, str]) -> Any:
        prog = ctypes.c_void_p()
        texts = (ctypes.c_char_p * len(headers))(*[h.encode() for h in headers.values()])
        names = (ctypes.c_char_p * len(headers))(*[n.encode() for n in headers])
        self._call("hiprtcCreateProgram", ctypes.byref(prog), source.encode(), filename.encode(),
                   len(headers), texts, names)
        return prog

    def add_name(self, prog: Any, expr: str) -> None:
        self._call("hiprtcAddNameExpression", prog, hiprtc_name(expr).encode())

    def compile(self, prog: Any, options: list[str]) -> bool:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        return self._lib.hiprtcCompileProgram(prog, len(options), opts) == 0

    def log(self, prog: Any) -> str:
        size = ctypes.c_size_t()
        self._call("hiprtcGetProgramLogSize", prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        self._call("hiprtcGetProgramLog", prog, buf)
        return buf.value.decode(errors="replace")

    def lowered(self, prog: Any, expr: str) -> str:
        name = ctypes.c_char_p()
        self._call("hiprtcGetLoweredName", prog, hiprtc_name(expr).encode(), ctypes.byref(name))
        return (name.value or b"").decode()

    def code(self, prog: Any) -> bytes:
        size = ctypes.c_size_t()
        self._call("hiprtcGetCodeSize", prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        self._call("hiprtcGetCode", prog, buf)
        return buf.raw

    def destroy(self, prog: Any) -> None:
        self._lib.hiprtcDestroyProgram(ctypes.byref(prog))


def _rtc(kind: str) -> Any:
    if kind == "hiprtc":
        return HiprtcCtypes()
    from .runtime.nvidia import NvrtcRtc  # NVRTC needs no driver and no GPU

    return NvrtcRtc()


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
    for ks in sources:
        merged.setdefault((ks.path, ks.options), {}).update(dict.fromkeys(ks.names))
    return [KernelSource(path, tuple(names)[i:i + chunk], options)
            for (path, options), names in merged.items() for i in range(0, len(names), chunk)]


def _compile_one(target: str, ks: KernelSource) -> tuple[str, str, int, float, str]:
    """Compile one program for one target: (target, path, names, seconds, error log or "")."""
    from .runtime.compiler import kernel_source

    kind, arch, wave = TARGETS[target]
    rtc = _rtc(kind)
    start = time.perf_counter()
    try:
        code, _ = compile_program(rtc, kernel_source(ks.path), ks.path, ks.names,
                                  [*rtc.target_options(arch, wave), *ks.options], target)
        error = "" if code else f"{ks.path}: the compiler returned no code"
    except CompileError as exc:
        error = str(exc)
    return target, ks.path, len(ks.names), time.perf_counter() - start, error


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
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    targets = args.target or list(TARGETS)
    sources = batched([ks for ks in kernel_sources() if not args.path or ks.path in args.path])
    total = sum(len(ks.names) for ks in sources)
    print(f"compile-check: {len(sources)} programs, {total} instantiations, targets {', '.join(targets)}")
    for target in targets:
        try:
            rtc = _rtc(TARGETS[target][0])
            print(f"  {target}: {rtc.name} {rtc.version()}")
        except Exception as exc:  # a compiler that is not installed fails the check too
            print(f"  {target}: compiler unavailable: {type(exc).__name__}: {exc}")
            return 1
    failures = 0
    spent: dict[str, float] = dict.fromkeys(targets, 0.0)
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(_compile_one, t, ks) for t in targets for ks in sources]
        for job in jobs:
            target, path, n, seconds, error = job.result()
            spent[target] += seconds
            if error:
                failures += 1
                print(f"FAILED {target} {path} ({n} names):\n{error}\n")
    for target in targets:
        print(f"  {target}: {len(sources)} programs compiled in {spent[target]:.1f} s of compiler time")
    print("compile-check: " + (f"{failures} program(s) FAILED" if failures else "all kernels compiled"))
    return 1 if failures else 0
