"""The command line: ``python -m rocm_array {info,plugins,compile-check,resources-page,warm}`` (also ``rocm-array``).

``info`` is the smoke test a new user runs first: it shows what was found
(devices, platform, plugins) and checks one small computation against NumPy on
the default device, exiting non-zero when the result is wrong.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import textwrap
from typing import Sequence

import numpy as np

import rocm_array as xp
from rocm_array import devices, plugin_manager
from rocm_array.namespace import TABLE
from rocm_array.runtime import vendor
from rocm_array.devices import Device

__all__ = ["main"]


def _describe(dev: Device) -> str:
    if dev.kind == "cpu":
        return f"host CPU ({platform.machine()}), NumPy {np.__version__}"
    p = dev.runtime.properties
    return (f"platform {p.platform}, {p.name}, {p.arch}, wave size {p.wave_size}, "
            f"{p.compute_units} compute units, {p.total_memory / 2**30:.1f} GiB")


def _plugin_state(st: plugin_manager.PluginStatus) -> str:
    return st.status + (f" ({st.reason})" if st.reason else "")


def _peers(gpus: Sequence[Device]) -> None:
    """How ``to_device`` copies between each pair of GPUs: a peer copy or through the host, and why."""
    if len(gpus) < 2:
        return
    print("copies between GPUs (to_device):")
    for a in gpus:
        routes: dict[str, list[str]] = {}
        for b in gpus:
            if b != a:
                try:
                    route = str(a.runtime.peer_route(b.runtime))
                except Exception as exc:  # noqa: BLE001 - report, don't trace back (as the check below)
                    route = f"FAILED: {type(exc).__name__}: {exc}"
                routes.setdefault(route, []).append(str(b))
        for route, targets in routes.items():
            print(f"  {a} -> {', '.join(targets)}: {route}")


def _check(dev: Device) -> bool:
    """``a * a + a`` on ``dev`` against NumPy on the host."""
    host = np.arange(-6, 6, dtype=np.float32).reshape(3, 4) / 4
    a = xp.asarray(host, device=dev)
    got = np.asarray(xp.add(xp.multiply(a, a), a).to_device("cpu"))
    ok = got.shape == host.shape and bool(np.allclose(got, host * host + host, rtol=1e-6))
    print(f"check on {dev}: a * a + a, float32 {host.shape}: {'OK' if ok else 'MISMATCH'}")
    if not ok:
        print(f"  expected {(host * host + host).tolist()}\n  got      {got.tolist()}")
    return ok


def info() -> int:
    """``info``: versions, devices with their vendor libraries, plugins, and a computation on the
    default device checked against NumPy. Exits 1 if the check fails or the default device is missing."""
    print(f"rocm_array {xp.__version__} (Array API {xp.__array_api_version__}), "
          f"Python {platform.python_version()}")
    print("devices:")
    for dev in devices.available():
        print(f"  {dev!s:8} {_describe(dev)}")
        if dev.kind == "gpu":  # what the plugins' GPU backs would call, and what is missing
            for name, found, detail in vendor.report(dev.runtime):
                print(f"           {name}: " + (f"found ({detail or 'version unknown'})" if found else f"MISSING: {detail}"))
    for problem in devices.gpu_problems():
        print(f"  (unavailable: {problem})")  # a platform or GPU that was not found, and why
    _peers(devices.gpus())
    try:
        dev = devices.default()
    except ValueError as exc:  # ROCM_ARRAY_DEVICE names a device that is not there
        print(f"default device: {exc}")
        return 1
    print(f"default device: {dev}")
    print("plugins:")
    for st in plugin_manager.statuses():
        public = len(_public(st.functions))
        internal = len(st.functions) - public
        print(f"  {st.name:14} {_plugin_state(st)}, {public} functions"
              + (f" and {internal} Array methods and protocols" if internal else ""))
    try:
        return 0 if _check(dev) else 1
    except Exception as exc:  # report, don't trace back: this is the user's first command
        print(f"check on {dev}: FAILED: {type(exc).__name__}: {exc}")
        return 1


def _public(names: Sequence[str]) -> list[str]:
    """The names users call: not the Array methods and protocols a plugin provides (``Array.*``)."""
    return [n for n in names if not n.startswith("Array.")]


def plugins() -> int:
    """``plugins``: each plugin's distribution, version, status, functions and overrides."""
    found = plugin_manager.statuses()
    cols = ("plugin", "distribution", "version", "status")
    rows = [(st.name, st.distribution, st.version, _plugin_state(st)) for st in found]
    widths = [max(len(r[i]) for r in [cols, *rows]) for i in range(3)]
    for row in [cols, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3])
    for name, why in sorted(TABLE.conflicts.items()):
        print(f"conflict: {why}")
    for st in found:
        public = _public(st.functions)
        internal = len(st.functions) - len(public)
        print(f"\n{st.name} provides {len(public)} functions"
              + (f" and {internal} Array methods and protocols" if internal else "")
              + (" (if enabled)" if st.status == "blocked" else "") + ":")
        print(textwrap.fill(", ".join(public) or "-", width=100, initial_indent="  ", subsequent_indent="  "))
        if st.overrides:
            print(textwrap.fill("overrides: " + ", ".join(f"{n} (of {who})" for n, who in sorted(st.overrides.items())),
                                width=100, initial_indent="  ", subsequent_indent="    "))
    return 0


def compile_check(argv: Sequence[str]) -> int:
    """``compile-check``: compile every kernel for target architectures, without a GPU."""
    module = importlib.import_module("rocm_array.compile_check")  # (imported by this command only)
    return int(module.main(list(argv)) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["compile-check"]:  # its own options are parsed by compile_check.main
        return compile_check(args[1:])
    if args[:1] == ["warm"]:
        from rocm_array import warm
        return warm.main(args[1:])
    if args[:1] == ["resources-page"]:
        from rocm_array.occupancy import page
        return page.main(args[1:])
    parser = argparse.ArgumentParser(prog="rocm-array", description="rocm_array: inspect the installation.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, command in (("info", info), ("plugins", plugins)):
        doc = " ".join((command.__doc__ or "").split())
        summary = doc.partition(": ")[2].replace("``", "")
        sub.add_parser(name, help=summary.partition(". ")[0].rstrip("."), description=summary[:1].upper() + summary[1:])
    sub.add_parser("compile-check", help="compile every kernel for target architectures, without a GPU "
                                         "(see compile-check --help)")
    sub.add_parser("warm", help="fill the kernel cache of a GPU so no first call compiles (see warm --help)")
    sub.add_parser("resources-page", help="the docs page of compile-check's resource reports, written or checked "
                                          "(see resources-page --help)")
    command = parser.parse_args(args).command
    try:
        status = info() if command == "info" else plugins()
        sys.stdout.flush()  # here, not at exit, where a closed pipe could no longer be handled
        return status
    except BrokenPipeError:
        # The reader stopped early (`| head`): not an error of ours. Python would report the
        # pipe again when it flushes stdout at exit, so stdout goes to /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
