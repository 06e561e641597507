"""Figures from a run's raw results: rates, ceilings, ratios; the Markdown table, JSON and bar chart.

Everything here is pure: it reads the run record (the dict that is written as
JSON) and computes nothing on a device, so it is tested without a GPU.

Run record: ``{"env": {...}, "ceilings": {key: {...}}, "cases": [{"name", "kind",
"note", "work": {"bytes"|"flops", "dtype"}, "results": {lib: Result.to_json()}}]}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .cases import Work
from .libs import LIBRARIES, PEERS, TITLES

__all__ = ["rate", "ceilings", "ratio", "markdown_table", "first_call_table", "document", "write_json",
           "plot"]

LIB_ORDER = tuple(LIBRARIES)
#: The environment's keys that the report writes in its own words.
RUN_KEYS = ("command", "date", "commit", "l2_bytes", "wall_s", "total_s", "at_once")


def _ok(case: dict[str, Any], lib: str) -> dict[str, Any] | None:
    r = case["results"].get(lib)
    return r if r and r.get("status") == "ok" else None


def rate(work: dict[str, Any], ms: float) -> tuple[float, str] | None:
    """Achieved GB/s (bytes) or TFLOP/s (flops) for one call of ``ms`` milliseconds."""
    if work.get("flops"):
        return work["flops"] / (ms * 1e-3) / 1e12, "TFLOP/s"
    if work.get("bytes"):
        return work["bytes"] / (ms * 1e-3) / 1e9, "GB/s"
    return None


def ceiling_key(work: dict[str, Any]) -> str | None:
    return Work(**work).ceiling


def ceilings(cases: list[dict[str, Any]], ceiling_cases: set[str]) -> dict[str, dict[str, Any]]:
    """Each ceiling: the best rate the peers reach on its ceiling case (rocm_array's when no peer ran)."""
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        if case["name"] not in ceiling_cases:
            continue
        for group in (PEERS, ("rocm_array",)):
            best = max(((rate(case["work"], r["median_ms"]), lib) for lib in group if (r := _ok(case, lib))),
                       default=None, key=lambda t: t[0][0])
            if best:
                (value, unit), lib = best
                out[ceiling_key(case["work"])] = {"value": value, "unit": unit, "by": lib, "case": case["name"]}
                break
    return out


def ratio(case: dict[str, Any], lib: str, peer: str) -> float | None:
    """How many times faster ``lib`` is than ``peer`` on ``case`` (peer's time / lib's time)."""
    a, b = _ok(case, lib), _ok(case, peer)
    return b["median_ms"] / a["median_ms"] if a and b else None


def _time(ms: float) -> str:
    if ms >= 1000:
        return f"{ms / 1e3:.2f} s"
    if ms >= 1:
        return f"{ms:.3g} ms"
    return f"{ms * 1e3:.3g} µs"


def _amount(work: dict[str, Any]) -> str:
    if work.get("flops"):
        return f"{work['flops'] / 1e9:.4g} GFLOP {work['dtype']}"
    if work.get("bytes"):
        return f"{work['bytes'] / 1e9:.4g} GB"
    return ""


def _cell(case: dict[str, Any], lib: str, ceils: dict[str, dict[str, Any]]) -> str:
    r = case["results"].get(lib)
    if r is None:
        return "—"
    if r["status"] != "ok":
        return r["status"]
    text = _time(r["median_ms"]) + ("/call" if case["kind"] == "host" else "")
    achieved = rate(case["work"], r["median_ms"])
    if achieved:
        value, unit = achieved
        text += f" · {value:.4g} {unit}"
        ceil = ceils.get(ceiling_key(case["work"]) or "")
        if ceil:
            text += f" · {100 * value / ceil['value']:.0f}%"
    return text


def _libs(run: dict[str, Any]) -> list[str]:
    present = {lib for c in run["cases"] for lib in c["results"]}
    return [lib for lib in LIB_ORDER if lib in present]


def markdown_table(run: dict[str, Any]) -> str:
    """One row per case: each library's median time, rate and % of ceiling; rocm_array's speed-up over each peer."""
    libs = _libs(run)
    peers = [p for p in PEERS if p in libs]
    head = ["case", "work", *(TITLES[lib] for lib in libs), *(f"vs {TITLES[p]}" for p in peers)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case in run["cases"]:
        ratios = [ratio(case, "rocm_array", p) for p in peers]
        cells = [case["name"], _amount(case["work"]), *(_cell(case, lib, run["ceilings"]) for lib in libs),
                 *(f"{x:.2f}×" if x is not None else "" for x in ratios)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def first_call_table(run: dict[str, Any]) -> str:
    """The warm-up's first call of each device case (compilation, handle creation, lazy loading)."""
    libs = _libs(run)
    rows = ["| case | " + " | ".join(TITLES[lib] for lib in libs) + " |", "|" + "---|" * (len(libs) + 1)]
    for case in run["cases"]:
        firsts = [case["results"].get(lib, {}).get("first_call_ms") for lib in libs]
        if any(f is not None for f in firsts):
            rows.append(f"| {case['name']} | " + " | ".join(_time(f) if f is not None else "" for f in firsts) + " |")
    return "\n".join(rows)


def first_contact_table(run: dict[str, Any]) -> str:
    """The first-contact cases: each family's first call in a fresh process, cold and warm."""
    libs = _libs(run)
    cases = {c["name"]: c for c in run["cases"]}
    families = [n[len("first_"):-len("_cold")] for n in cases if n.startswith("first_") and n.endswith("_cold")
                and n != "first_call_cold"]
    if not families:
        return ""
    head = ["family", *(f"{TITLES[lib]} cold" for lib in libs), *(f"{TITLES[lib]} warm" for lib in libs)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in families:
        cells = [f]
        for state in ("cold", "warm"):
            case = cases.get(f"first_{f}_{state}", {"results": {}})
            for lib in libs:
                r = case["results"].get(lib, {})
                cells.append(_time(r["median_ms"]) if r.get("status") == "ok" else "n/a")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _ceiling_lines(run: dict[str, Any]) -> list[str]:
    return [f"- {key}: {c['value']:.4g} {c['unit']} ({TITLES[c['by']]}, case `{c['case']}`)"
            for key, c in run["ceilings"].items()]


def _reasons(run: dict[str, Any]) -> list[str]:
    """One line per distinct reason a case was n/a or failed, with the cases it hit."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for case in run["cases"]:
        for lib, r in case["results"].items():
            if r["status"] != "ok" or r.get("reason"):
                seen.setdefault((lib, r["status"], r.get("reason", "")), []).append(case["name"])
    return [f"- {TITLES[lib]} {'note' if status == 'ok' else status} ({', '.join(names)}): {reason}"
            for (lib, status, reason), names in seen.items()]


def document(run: dict[str, Any]) -> str:
    """BENCHMARKS.md: the environment, the ceilings, the table, first calls, notes and method."""
    env = run["env"]
    lines = [
        "# Benchmarks: rocm_array beside CuPy and PyTorch",
        "",
        f"Run `{env.get('command', 'python -m benchmarks')}` on {env.get('date', '?')}, "
        f"commit `{env.get('commit', '?')}`.",
        "",
        *(f"- {k}: {v}" for k, v in env.items() if k not in RUN_KEYS),
        f"- L2 cache: {env.get('l2_bytes', 0) / 2**20:.0f} MiB",
        *([f"- wall time: {env['wall_s']:.0f} s" + (f" (budget {env['total_s']:g} s)" if env.get("total_s") else "")
           + f"; fresh processes up to {env.get('at_once', 1)} at once"] if "wall_s" in env else []),
        "",
        "## Ceilings (measured in the same run)",
        *_ceiling_lines(run),
        "",
        "## Results",
        "Median of many repeats, each timed with the library's device events around its GPU work alone "
        "(the repeats are queued behind a spin kernel, so the host's cost of a call is not counted: "
        "`tiny_add` measures that); inputs are fresh random "
        "numbers in rotating sets larger than the L2 cache. A cell is time · rate · % of its ceiling "
        "(copy bandwidth for byte-bound cases, the GEMM rate of the dtype for FLOP-bound ones). "
        "`vs X` is X's time over rocm_array's (above 1: rocm_array is faster). Cases that only read "
        "(the sums) can pass 100% of the copy bandwidth, which counts a read and a write.",
        "",
        markdown_table(run),
        "",
        "The bar chart of each library's speed relative to the best peer is `ratios.png` in the run's output "
        "folder (committed as `benchmarks/results/ratios.png`); the raw times are in its `results.json`.",
        "",
        "## First call (excluded from the figures above)",
        first_call_table(run),
        "",
        "## First contact: each family's first call in a fresh process",
        "From the call to its result on the host, after import, discovery and upload: cold with an empty "
        "kernel cache (CuPy's too; PyTorch ships compiled kernels, so its cold and warm are one measurement), "
        "warm with the cache a previous process filled. The median of the measurement's processes: three for "
        "the vendor families' warm calls and for `add` (also `first_call_*`), one otherwise; no other process "
        "touched the GPU during a timed call (`at_once` and `discarded` in `results.json`: the processes alive "
        "during it, the samples taken again).",
        "",
        first_contact_table(run),
        "",
        "## Notes",
        *(f"- `{c['name']}`: {c['note']}" for c in run["cases"] if c.get("note")),
        *_reasons(run),
        "",
    ]
    return "\n".join(lines)


def write_json(run: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(run, indent=1) + "\n")


def plot(run: dict[str, Any], path: Path) -> str:
    """A bar chart of each library's speed relative to the best peer per case; returns what was done."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    libs = _libs(run)
    rows = []
    for case in run["cases"]:
        peer_times = [r["median_ms"] for p in PEERS if (r := _ok(case, p))]
        if peer_times and _ok(case, "rocm_array"):
            best = min(peer_times)
            rows.append((case["name"], [best / r["median_ms"] if (r := _ok(case, lib)) else 0.0 for lib in libs]))
    if not rows:
        return "no case ran on rocm_array and a peer: no plot"
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) * len(libs) + 1.5))
    height = 0.8 / len(libs)
    for j, lib in enumerate(libs):
        ax.barh([i + j * height for i in range(len(rows))], [v[j] for _, v in rows], height, label=TITLES[lib])
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(rows))], [name for name, _ in rows])
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ticks = [t for t in (0.03, 0.1, 0.25, 0.5, 1, 2, 4, 10, 30)
             if min(v for _, vs in rows for v in vs if v) / 2 <= t <= 2 * max(v for _, vs in rows for v in vs)]
    ax.set_xticks(ticks, [f"{t:g}×" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("speed relative to the best of CuPy and PyTorch (higher is faster)")
    ax.set_title(f"{run['env'].get('gpu', 'GPU')}: time of the best peer / time")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"
