"""What each target's compute unit holds, and the waves a SIMD runs for a kernel's resources.

Written down once, with their sources, for the targets the compile check builds:

- AMD, from LLVM's AMDGPU back end, whose numbers hiprtc's compiler schedules against
  (``llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp``: ``getTotalNumVGPRs``,
  ``getVGPRAllocGranule``, ``getMaxWavesPerEU``, ``getLocalMemorySize``, ``getEUsPerCU``,
  ``getMaxWorkGroupsPerCU``, ``getOccupancyWithNumSGPRs``), which agree with AMD's documents:
  LLVM's AMDGPUUsage ("Memory Model"/"LDS": 64 KiB a CU on GFX9, 128 KiB a WGP on GFX10 and
  GFX11 in WGP mode, hiprtc's default), the CDNA2 and CDNA3 ISA guides (a unified file of 512
  VGPRs a lane a SIMD, architectural and accumulation registers together, allocated in blocks of
  8; 8 waves a SIMD), and the RDNA2 and RDNA3 ISA guides (wave32: 1024 VGPRs a lane a SIMD on
  gfx1030 in blocks of 16, 1536 on gfx1100 in blocks of 24; 16 waves a SIMD).
- NVIDIA sm_90, from the CUDA C++ Programming Guide ("Technical Specifications per Compute
  Capability", 9.0: 65536 registers, 64 warps, 32 blocks and 228 KiB of shared memory an SM, of
  which 227 KiB for one block, and 1 KiB reserved for each block) and the CUDA Occupancy
  Calculator's allocation rules (registers by the warp in units of 256, shared memory in units of
  128 bytes). An SM has 4 sub-partitions; a "SIMD" here is one of them, so 16 warps at most.

A work-group's waves all run on one CU (GFX9), WGP (GFX10+ in WGP mode) or SM, spread over its
SIMDs: the waves a SIMD holds come from the whole groups that fit the CU's registers, LDS and
group slots, divided among its SIMDs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .codeobject import KernelUse

__all__ = ["Limits", "LIMITS", "Occupancy", "occupancy"]


@dataclass(frozen=True)
class Limits:
    """One target's compute unit, for one wave size.

    ``lane_registers``: vector registers a lane of a SIMD has for all its waves; ``granule``: the
    block a wave's are allocated in; ``max_waves``: waves a SIMD holds at most; ``simds``: SIMDs a
    work-group's waves share; ``lds``: LDS (shared memory) bytes they share, allocated in
    ``lds_granule``s, with ``lds_reserved`` more taken by every group; ``max_groups``: groups a CU
    holds at most (its barriers, or the SM's block slots); ``barriers``: whether that bound is the
    barriers (AMD), which a group of one wave does not take; ``sgprs``: whether scalar registers can
    limit the waves (GFX9 only: 800 a SIMD; GFX10 on gives every wave its own)."""

    target: str
    wave_size: int
    lane_registers: int
    granule: int
    max_waves: int
    simds: int
    lds: int
    lds_granule: int
    max_groups: int
    lds_reserved: int = 0
    barriers: bool = True
    sgprs: bool = False


#: LDS is allocated to a work-group in blocks of 128 dwords on GFX7 and later (AMDGPUUsage, the
#: kernel descriptor's COMPUTE_PGM_RSRC2.LDS_SIZE).
_AMD_LDS_GRANULE = 512
LIMITS: dict[str, Limits] = {
    "gfx90a": Limits("gfx90a", 64, 512, 8, 8, 4, 64 * 1024, _AMD_LDS_GRANULE, 16, sgprs=True),
    "gfx942": Limits("gfx942", 64, 512, 8, 8, 4, 64 * 1024, _AMD_LDS_GRANULE, 16, sgprs=True),
    "gfx1030": Limits("gfx1030", 32, 1024, 16, 16, 4, 128 * 1024, _AMD_LDS_GRANULE, 32),
    "gfx1100": Limits("gfx1100", 32, 1536, 24, 16, 4, 128 * 1024, _AMD_LDS_GRANULE, 32),
    # 16384 registers a sub-partition are 512 a lane; 256 a warp is 8 a lane.
    "sm_90": Limits("sm_90", 32, 512, 8, 16, 4, 228 * 1024, 128, 32, lds_reserved=1024, barriers=False),
}


@dataclass(frozen=True)
class Occupancy:
    """The waves a SIMD holds of one kernel (the average over the CU's SIMDs when a group's waves do
    not divide among them evenly), and what limits them: "waves" (the SIMD's most), "vgprs",
    "sgprs", "lds" or "groups" (the CU's group slots)."""

    waves: float
    limiter: str


def _sgpr_waves(sgprs: int) -> int:
    """GFX9's waves a SIMD by scalar registers a wave (LLVM's getOccupancyWithNumSGPRs, 800 a SIMD)."""
    return 10 if sgprs <= 80 else 9 if sgprs <= 88 else 8 if sgprs <= 100 else 7


def occupancy(use: KernelUse, threads: int, dynamic_lds: int, limits: Limits) -> Occupancy:
    """The waves a SIMD holds of a kernel using ``use`` launched with ``threads`` a block and
    ``dynamic_lds`` bytes of dynamic LDS (shared memory) a block."""
    per_group = -(-threads // limits.wave_size)
    regs = -(-max(use.vgprs, 1) // limits.granule) * limits.granule
    by_simd = {"waves": limits.max_waves, "vgprs": limits.lane_registers // regs}
    if limits.sgprs:
        by_simd["sgprs"] = _sgpr_waves(use.sgprs)
    # Whole groups: those the SIMDs' registers hold together, the LDS and the group slots.
    groups = {name: waves * limits.simds // per_group for name, waves in by_simd.items()}
    lds = use.lds + dynamic_lds
    if lds:
        groups["lds"] = limits.lds // (-(-(lds + limits.lds_reserved) // limits.lds_granule) * limits.lds_granule)
    if per_group > 1 or not limits.barriers:
        groups["groups"] = limits.max_groups
    limiter = min(groups, key=lambda k: (groups[k], k != "waves"))  # (ties: the SIMD's own bound first)
    return Occupancy(groups[limiter] * per_group / limits.simds, limiter)
