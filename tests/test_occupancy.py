"""The resource report: code objects read without a GPU, the waves a SIMD of each target holds, the
budget, the docs page, and the launch kit's declared blocks that all of them use."""

from __future__ import annotations

import re
import struct
from typing import Any

import pytest

from rocm_array.compile_check import PORTABILITY, batched
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, LaunchError, PerTarget
from rocm_array.occupancy import budget, codeobject, page, report
from rocm_array.occupancy.codeobject import KernelUse
from rocm_array.occupancy.limits import LIMITS, occupancy
from rocm_array.runtime import targets
from rocm_array.runtime.compiler import compile_program, kernel_headers, kernel_source


# -- code objects -----------------------------------------------------------------------------------
def _msgpack(value: Any) -> bytes:
    """The MessagePack of the values LLVM writes (enough for the tests)."""
    if isinstance(value, bool):
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        return struct.pack(">BI", 0xCE, value) if value > 127 else bytes([value])
    if isinstance(value, str):
        raw = value.encode()
        return bytes([0xD9, len(raw)]) + raw
    if isinstance(value, list):
        return bytes([0xDC]) + struct.pack(">H", len(value)) + b"".join(map(_msgpack, value))
    return (bytes([0xDE]) + struct.pack(">H", len(value))
            + b"".join(_msgpack(k) + _msgpack(v) for k, v in value.items()))


def _elf(sections: list[tuple[str, int, bytes]]) -> bytes:
    """An ELF64 of ``sections`` (name, type, contents) after the null one, the names in .shstrtab."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n, _, _ in sections) + b".shstrtab\0"
    offsets, at = [], 1
    for n, _, _ in sections:
        offsets.append(at)
        at += len(n) + 1
    body, headers = b"", [bytes(64)]
    for (_, kind, data), name in zip([*sections, (".shstrtab", 3, names)], [*offsets, at]):
        headers.append(struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, 64 + len(body), len(data), 0, 0, 1, 0))
        body += data
    header = bytearray(64)
    header[:5] = b"\x7fELF\x02"
    struct.pack_into("<Q", header, 0x28, 64 + len(body))
    struct.pack_into("<HHH", header, 0x3A, 64, len(headers), len(headers) - 1)
    return bytes(header) + body + b"".join(headers)


def _note(owner: str, kind: int, desc: bytes) -> bytes:
    name = owner.encode() + b"\0"
    pad = lambda b: b + bytes(-len(b) % 4)  # noqa: E731
    return struct.pack("<III", len(name), len(desc), kind) + pad(name) + pad(desc)


def test_an_amd_code_objects_metadata_note_gives_each_kernels_resources() -> None:
    kernel = {".name": "_Z1kv", ".vgpr_count": 40, ".agpr_count": 4, ".sgpr_count": 30,
              ".group_segment_fixed_size": 4096, ".private_segment_fixed_size": 16, ".vgpr_spill_count": 2,
              ".sgpr_spill_count": 0, ".wavefront_size": 64, ".max_flat_workgroup_size": 256,
              ".uses_dynamic_stack": False}
    meta = {"amdhsa.version": [1, 2], "amdhsa.target": "amdgcn-amd-amdhsa--gfx90a", "amdhsa.kernels": [kernel]}
    code = _elf([(".note", 7, _note("AMDGPU", 32, _msgpack(meta)))])
    assert codeobject.amd_kernels(code) == {"_Z1kv": KernelUse(
        "_Z1kv", vgprs=40, agprs=4, sgprs=30, lds=4096, scratch=16, vgpr_spills=2, wave_size=64, max_threads=256)}
    with pytest.raises(codeobject.CodeObjectError, match="NT_AMDGPU_METADATA"):
        codeobject.amd_kernels(_elf([(".note", 7, _note("AMDGPU", 1, b"x"))]))
    with pytest.raises(codeobject.CodeObjectError, match="ELF64"):
        codeobject.amd_kernels(b"not an elf")


def test_a_cubins_registers_are_what_ptxas_reports() -> None:
    nvidia = pytest.importorskip("rocm_array.runtime.nvidia", reason="cuda-bindings is not installed")
    rtc = nvidia.NvrtcRtc()
    try:
        rtc.version()
    except Exception as exc:  # noqa: BLE001 - NVRTC's library is not installed
        pytest.skip(f"NVRTC is unavailable: {exc}")
    prog = rtc.create(kernel_source(PORTABILITY.path), PORTABILITY.path, kernel_headers())
    try:
        for name in PORTABILITY.names:
            rtc.add_name(prog, name)
        # --no-cache: NVRTC 12.9+ may answer a compile it made before from a cache of its own, without
        # running ptxas and so without its log. The H100's fusion-off suite, run after the plain one
        # on the same machine, got an empty log; nvFuser passes the same option with -v.
        assert rtc.compile(prog, [*rtc.target_options("sm_90", 32), "-Xptxas=-v", "--no-cache"])
        log, code = rtc.log(prog), rtc.code(prog)
    finally:
        rtc.destroy(prog)
    ptxas = dict(re.findall(r"Function properties for (\S+)\n.*\n.*Used (\d+) registers", log))
    kernels = codeobject.nvidia_kernels(code)
    assert len(ptxas) == len(PORTABILITY.names), f"ptxas's log names {len(ptxas)} kernels:\n{log}"
    assert {s: str(k.vgprs) for s, k in kernels.items()} == ptxas
    smem = dict(re.findall(r"Function properties for (\S+)\n.*\n.*registers, used \d+ barriers, (\d+) bytes smem", log))
    assert smem and all(kernels[s].lds == int(b) for s, b in smem.items())  # (without the 1 KiB reserved a block)


# -- the waves a SIMD holds ---------------------------------------------------------------------------
@pytest.mark.parametrize("target, vgprs, sgprs, lds, threads, dynamic, waves, limiter", [
    ("gfx90a", 64, 40, 0, 256, 0, 8, "waves"),  # 512 / 64
    ("gfx90a", 128, 40, 0, 256, 0, 4, "vgprs"),
    ("gfx90a", 132, 40, 0, 256, 0, 3, "vgprs"),  # 136 in blocks of 8
    ("gfx90a", 24, 104, 0, 256, 0, 7, "sgprs"),  # GFX9's scalar file: 7 waves past 100
    ("gfx90a", 24, 40, 32 * 1024, 256, 0, 2, "lds"),  # 2 groups of 4 waves on 4 SIMDs
    ("gfx90a", 24, 40, 16 * 1024, 256, 512, 3, "lds"),  # 16.5 KiB: 3 groups
    ("gfx90a", 24, 40, 1024, 128, 0, 8, "waves"),
    ("gfx90a", 24, 40, 0, 64, 0, 8, "waves"),  # a group of one wave takes no barrier
    ("gfx1030", 32, 40, 0, 256, 0, 16, "waves"),
    ("gfx1030", 80, 40, 0, 256, 0, 12, "vgprs"),  # 1024 / 80 in blocks of 16 (WGP: 4 SIMDs, 8 waves a group)
    ("gfx1100", 80, 40, 0, 256, 0, 16, "waves"),  # 1536 / 96 in blocks of 24
    ("gfx1100", 24, 40, 32 * 1024, 256, 0, 8, "lds"),  # 128 KiB a WGP: 4 groups of 8 waves
    ("sm_90", 32, 0, 0, 256, 0, 16, "waves"),
    ("sm_90", 255, 0, 0, 256, 0, 2, "vgprs"),
    ("sm_90", 32, 0, 48 * 1024, 256, 0, 8, "lds"),  # 49 KiB with the 1 KiB reserved: 4 blocks an SM
    ("sm_90", 32, 0, 0, 32, 0, 8, "groups"),  # 32 blocks an SM, of one warp each
])
def test_waves_a_simd(target: str, vgprs: int, sgprs: int, lds: int, threads: int, dynamic: int, waves: float,
                      limiter: str) -> None:
    got = occupancy(KernelUse("k", vgprs, sgprs=sgprs, lds=lds), threads, dynamic, LIMITS[target])
    assert (got.waves, got.limiter) == (waves, limiter)


# -- the launch kit's declarations -----------------------------------------------------------------
class _Props:
    def __init__(self, arch: str, wave: int) -> None:
        self.arch, self.wave_size = arch, wave


class _Device:
    """What the launch kit reads of a device: its runtime's properties."""

    def __init__(self, arch: str, wave: int) -> None:
        self.runtime = type("Runtime", (), {"properties": _Props(arch, wave)})()


def test_a_constant_per_kind_of_gpu_is_chosen_by_the_architecture() -> None:
    f = Family("copy/copy.hip", {"A": PerTarget(nvidia=1, cdna=2, rdna=3), "B": 4},
               {"copy_transpose": PerTarget(nvidia=256, cdna=512, rdna=256)})
    assert [f.options(k) for k in targets.KINDS] == [("-DA=1", "-DB=4"), ("-DA=2", "-DB=4"), ("-DA=3", "-DB=4")]
    for arch, wave, kind in (("sm_90", 32, "nvidia"), ("gfx942", 64, "cdna"), ("gfx1100", 32, "rdna"),
                             ("sim64", 64, "cdna"), ("sim32", 32, "rdna")):
        assert targets.kind(arch, wave) == kind
        assert f.options_on(_Device(arch, wave)) == f.options(kind)  # type: ignore[arg-type]
    assert f.block(_Device("gfx90a", 64), "copy_transpose<float, float>") == 512  # type: ignore[arg-type]
    sources = f.sources([("copy_transpose<float, float>", "fill<float>")])
    assert [(ks.kinds, ks.options[0], ks.threads) for ks in sources] == [
        (("nvidia",), "-DA=1", (256, BLOCK)), (("cdna",), "-DA=2", (512, BLOCK)), (("rdna",), "-DA=3", (256, BLOCK))]
    with pytest.raises(ValueError, match="gfx800"):
        targets.kind("gfx800", 64)


def test_a_family_without_values_per_kind_builds_one_program_for_all() -> None:
    f = Family("copy/copy.hip", {"B": 2, "A": 1}, {"copy_transpose": "A"}, {"copy_transpose": 64})
    (ks,) = f.sources([("copy_transpose<float, float>", "fill<float>")])
    assert (ks.kinds, ks.options, ks.threads, ks.shared) == ((), ("-DA=1", "-DB=2"), (1, BLOCK), (64, 0))


@pytest.mark.parametrize("wave", [32, 64])
def test_the_launch_kit_refuses_a_block_of_part_of_a_wave(wave: int) -> None:
    f = Family("copy/copy.hip", threads={"copy_transpose": 512}, shared={"copy_transpose": 1024})
    device: Any = _Device(f"sim{wave}", wave)
    f.check(device, "copy_transpose<float, float>", (32, wave // 32 * 8, 1), 1024)
    with pytest.raises(LaunchError, match=rf"copy/copy.hip: fill<float> .*\(48, 1, 1\).*wave size {wave} of sim{wave}"):
        f.check(device, "fill<float>", (48, 1, 1))
    with pytest.raises(LaunchError, match=r"fill<float> .*512 threads.*declares \(256 threads"):
        f.check(device, "fill<float>", (512, 1, 1))
    with pytest.raises(LaunchError, match=r"copy_transpose<float, float> .*2048 bytes.*1024 bytes"):
        f.check(device, "copy_transpose<float, float>", (64, 1, 1), 2048)


def test_the_compile_check_keeps_each_names_block_when_it_regroups() -> None:
    sources = [KernelSource("a.hip", ("k<1>", "k<2>"), threads=(64, 128), shared=(0, 8)),
               KernelSource("a.hip", ("k<3>",), threads=(256,), shared=(0,)),
               KernelSource("a.hip", ("k<1>",), ("-DX=1",), kinds=("cdna",), threads=(512,), shared=(0,))]
    out = batched(sources, chunk=2)
    assert [(ks.names, ks.options, ks.kinds, ks.threads, ks.shared) for ks in out] == [
        (("k<1>", "k<2>"), (), (), (64, 128), (0, 8)), (("k<3>",), (), (), (256,), (0,)),
        (("k<1>",), ("-DX=1",), ("cdna",), (512,), (0,))]


# -- the budget and the page --------------------------------------------------------------------------
def _row(target: str, path: str, name: str, waves: float, scratch: int = 0, threads: int = 256,
         bound: int = 1024) -> report.Row:
    use = KernelUse(name, 32, scratch=scratch, max_threads=bound, wave_size=LIMITS[target].wave_size)
    return report.Row(target, path, name, threads, 0, use, waves, "vgprs")


def test_the_budget_names_each_kernel_over_it_and_each_waiver_nobody_needs() -> None:
    rows = [_row("gfx90a", "copy/copy.hip", "fill<float>", 3),  # memory bound: below 4 of 8
            _row("gfx942", "reduction/sort.hip", "radix_onesweep<a, b>", 1),  # below 2
            _row("gfx1100", "reduction/sort.hip", "sort_counts<c>", 16, scratch=32),
            _row("sm_90", "nn/rows.hip", "softmax_rows<float>", 16, threads=1024, bound=512),
            _row("gfx90a", "linalg/small_gemm.hip", "small_gemm<64>", 1)]
    few = [budget.Waiver("linalg/small_gemm.hip", "small_gemm", "not launched on AMD"),
           budget.Waiver("nn/pool.hip", "pool2d", "stale", ("gfx90a",)),
           budget.Waiver("copy/copy.hip", "copy_transpose", "stale too")]
    found = budget.violations(rows, scratch=[], few=few)
    assert len(found) == 5
    assert found[0].startswith("gfx90a copy/copy.hip fill<float>: 3 waves a SIMD of 8") and "half" in found[0]
    assert found[1].startswith("gfx942 reduction/sort.hip radix_onesweep<a, b>: 1 waves") and "the 2" in found[1]
    assert found[2].startswith("gfx1100 reduction/sort.hip sort_counts<c>") and "uses scratch" in found[2]
    assert "declared for 1024 threads a block, its code allows 512" in found[3]
    assert found[4] == ("budget.FEW_WAVES lists copy/copy.hip copy_transpose (every target): no kernel on gfx90a "
                        "needs it: remove it, or name the targets that need it")
    for kernel in ("sort_counts", "sort_*<c>", "*<c>"):  # a template, or a pattern of name expressions
        assert budget.violations(rows[2:3], scratch=[budget.Waiver("reduction/sort.hip", kernel, "why")], few=[]) == []
    assert budget.violations(rows[2:3], scratch=[budget.Waiver("reduction/sort.hip", "sort_*<d>", "why")], few=[])


def test_a_waiver_is_judged_a_target_at_a_time_among_the_targets_reported() -> None:
    """A waiver stale on one of its targets is named for that one; a target the rows do not hold (an
    AMD report of a waiver that also covers sm_90) is not judged."""
    rows = [_row("gfx942", "copy/copy.hip", "fill<float>", 2), _row("gfx90a", "copy/copy.hip", "fill<int>", 8)]
    waiver = budget.Waiver("copy/copy.hip", "fill", "why", ("gfx90a", "gfx942", "sm_90"))
    assert budget.violations(rows, scratch=[], few=[waiver]) == [
        "budget.FEW_WAVES lists copy/copy.hip fill: no kernel on gfx90a needs it: remove those targets from it"]
    assert budget.violations(rows[:1], scratch=[], few=[waiver]) == []
    only = budget.Waiver("copy/copy.hip", "fill", "why", ("gfx90a", "sm_90"))
    assert budget.violations(rows[1:], scratch=[], few=[only]) == [
        "budget.FEW_WAVES lists copy/copy.hip fill: no kernel on gfx90a needs it: remove those targets from it"]


def test_the_page_is_made_from_the_reports(tmp_path: Any) -> None:
    rows = [_row("gfx90a", "copy/copy.hip", "fill<float>", 8), _row("gfx90a", "copy/copy.hip", "fill<int>", 6),
            _row("sm_90", "copy/copy.hip", "fill<float>", 16, scratch=8)]
    report.write(tmp_path / "r.json", rows)
    assert report.read([tmp_path / "r.json"]) == rows
    text = page.render(rows)
    assert "| copy/copy.hip | gfx90a | 2 | 6 of 8 (`fill<int>`, vgprs) | 7 | - |" in text
    assert "| copy/copy.hip | sm_90 | 1 | 16 of 16 (`fill<float>`, vgprs) | 16 | 1: `fill<float>` (8 B) |" in text
    out = tmp_path / "page.md"
    assert page.main([str(tmp_path / "r.json"), "--page", str(out), "--check"]) == 1
    assert page.main([str(tmp_path / "r.json"), "--page", str(out)]) == 0
    assert page.main([str(tmp_path / "r.json"), "--page", str(out), "--check"]) == 0


def test_every_launched_kernel_of_the_project_has_its_block_declared() -> None:
    """Each program the compile check builds carries the block of each of its kernels."""
    from rocm_array.compile_check import kernel_sources

    assert all(len(ks.threads) == len(ks.names) == len(ks.shared) for ks in kernel_sources())
