"""The compiler options that select a target, for each run-time compiler (platform neutral).

Shared by the runtime (compiling for the device present) and by the compile
check (compiling for named targets without a GPU).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

__all__ = ["hiprtc_options", "nvrtc_options", "NVRTC_MINIMAL_SINCE", "hiprtc_name", "KINDS", "kind", "PerTarget"]

#: Options every kernel is compiled with, on both platforms.
COMMON = ["-std=c++17"]


#: The kinds of GPU whose compute units differ enough for a kernel constant to take another value on
#: each (``launch.PerTarget``): NVIDIA's SMs; AMD's GFX9 (CDNA: gfx90a, gfx942), wave 64, 64 KiB of
#: LDS a CU and 8 or 10 waves a SIMD; AMD's GFX10 and GFX11 (RDNA: gfx1030, gfx1100), wave 32,
#: 128 KiB of LDS a WGP and 16 waves a SIMD.
KINDS = ("nvidia", "cdna", "rdna")


@dataclass(frozen=True)
class PerTarget:
    """A kernel constant (or a declared block) whose value is chosen per kind of GPU (``KINDS``),
    from the device's architecture at run time (``launch.Family`` passes it as ``-D``)."""

    nvidia: int
    cdna: int
    rdna: int

    def of(self, kind: str) -> int:
        return cast(int, getattr(self, kind))


def kind(arch: str, wave_size: int) -> str:
    """The kind (``KINDS``) of the architecture ``arch``. The simulator (``sim64``, ``sim32``) runs
    AMD's code path, so it takes AMD's values for its wave size: CDNA's at 64, RDNA's at 32."""
    if arch.startswith("sm_"):
        return "nvidia"
    if arch.startswith("gfx9"):
        return "cdna"
    if arch.startswith("gfx1"):
        return "rdna"
    if arch.startswith("sim"):
        return "cdna" if wave_size == 64 else "rdna"
    raise ValueError(f"no kind of GPU is known for the architecture {arch!r}: add it to runtime.targets.kind")


def hiprtc_options(arch: str, wave_size: int) -> list[str]:
    """hiprtc: the offload architecture (with features, ``gfx90a:xnack-``) and its wave size."""
    opts = [f"--offload-arch={arch}", "-O3", *COMMON, f"-DRA_WAVE_SIZE={wave_size}"]
    # RDNA (gfx10+) defaults to wave32; a device running wave64 there needs the code built for it.
    if arch.startswith("gfx1") and wave_size == 64:
        opts.append("-mwavefrontsize64")
    return opts


#: NVRTC's ``-minimal`` (12.4 on) leaves out of every program the CUDA runtime's types, its device
#: functions and textures, which no kernel here uses: the front end reads less of NVRTC's built-in
#: header. The code is the same (scan_tiles<float> and <double> gave the same cubin bytes with it);
#: the compile is shorter: on an H200's host (NVRTC 13.0, no compute cache), scan_tiles<float> took
#: 265 to 403 ms with it against 296 to 418 without (eight each, in turn); on a 2-core workstation
#: (NVRTC 13.5), a unary elementwise kernel 93 against 98 ms and reduce_inner 174 against 185 (the
#: best of five).
NVRTC_MINIMAL_SINCE = (12, 4)


def nvrtc_options(arch: str, wave_size: int, minimal: bool = False) -> list[str]:
    """NVRTC: a real architecture (``sm_90``), so the result is a cubin, not PTX; ``minimal`` where
    the NVRTC has ``-minimal`` (``NVRTC_MINIMAL_SINCE``)."""
    return [f"--gpu-architecture={arch}", *COMMON, f"-DRA_WAVE_SIZE={wave_size}", *(["-minimal"] if minimal else [])]


# hiprtc 5 finds a name expression's lowered name by comparing it with demangled
# symbols, which spell built-in types, not typedefs: "fill<int8_t>" is looked up
# as "fill<signed char>". Later hiprtc versions accept either spelling.
_HIPRTC_SPELLING = {
    "int8_t": "signed char", "int16_t": "short", "int32_t": "int", "int64_t": "long long",
    "uint8_t": "unsigned char", "uint16_t": "unsigned short", "uint32_t": "unsigned int",
    "uint64_t": "unsigned long long",
}
_TYPEDEF = re.compile(r"\b(" + "|".join(_HIPRTC_SPELLING) + r")\b")


def hiprtc_name(expr: str) -> str:
    """``expr`` with the kernels' integer typedefs spelled as the demangler spells them."""
    return _TYPEDEF.sub(lambda m: _HIPRTC_SPELLING[m.group(1)], expr)
