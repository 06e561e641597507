"""Run the array-api-tests suite against rocm_array on one device.

    python conformance/run.py SUITE [--device cpu|gpu:N] [--max-examples N] [--xfails-file FILE]
                              [PYTEST ARGS...] [-- PYTEST ARGS...]

SUITE is a checkout of https://github.com/data-apis/array-api-tests with its
``array-api`` submodule. The xfails file of the device kind
(``conformance/xfails-cpu.txt`` or ``xfails-gpu.txt``) lists one test id per line,
each followed by ``  # a one-line reason naming the upstream behaviour``; a line
without a reason is refused. Prints the collected/passed/failed/skipped counts and
exits with pytest's status.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
API_VERSION = "2025.12"


def read_xfails(path: Path) -> list[str]:
    """The test ids of an xfails file; ValueError for a line without its reason."""
    ids = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        test_id, sep, reason = line.partition("  # ")
        if not sep or not reason.strip() or not test_id.strip():
            raise ValueError(f"{path}:{number}: expected 'TEST_ID  # reason naming the upstream "
                             f"behaviour', got {line!r}")
        ids.append(test_id.strip())
    return ids


def outcomes(junit_xml: Path) -> Counter[str]:
    """passed / failed / error / skipped / xfailed counts of a pytest JUnit XML report."""
    counts: Counter[str] = Counter()
    for case in ET.parse(junit_xml).iter("testcase"):
        tags = {child.tag: child for child in case}
        if "failure" in tags:
            counts["failed"] += 1
        elif "error" in tags:
            counts["error"] += 1
        elif "skipped" in tags:
            xfail = tags["skipped"].get("type") == "pytest.xfail"
            counts["xfailed" if xfail else "skipped"] += 1
        else:
            counts["passed"] += 1
    return counts


def _names_tests(arg: str, suite: Path) -> bool:
    return not arg.startswith("-") and (suite / arg.split("::")[0]).exists()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    own, dashes, after = argv, [], []
    if "--" in argv:
        at = argv.index("--")
        own, dashes, after = argv[:at], ["--"], argv[at + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage=__doc__.split("\n\n")[1].strip())
    parser.add_argument("suite", type=Path, help="the array-api-tests checkout")
    parser.add_argument("--device", default="cpu", help="cpu or gpu:N (default cpu)")
    parser.add_argument("--max-examples", type=int, default=200, help="hypothesis examples per test")
    parser.add_argument("--xfails-file", type=Path, help="default: conformance/xfails-<cpu|gpu>.txt")
    args, pytest_args = parser.parse_known_args(own)
    pytest_args += after if dashes else []

    suite = args.suite.resolve()
    stubs = suite / "array-api" / "src" / "array_api_stubs" / f"_{API_VERSION.replace('.', '_')}"
    if not (suite / "array_api_tests").is_dir() or not stubs.is_dir():
        parser.error(f"{suite} is not an array-api-tests checkout with its array-api submodule "
                     "(git clone --recurse-submodules, or git submodule update --init)")
    kind = args.device.partition(":")[0]
    xfails_file = args.xfails_file or HERE / f"xfails-{kind}.txt"
    try:
        xfail_ids = read_xfails(xfails_file)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))

    env = {**os.environ, "ARRAY_API_TESTS_MODULE": "rocm_array", "ARRAY_API_TESTS_VERSION": API_VERSION,
           "ROCM_ARRAY_DEVICE": args.device}
    shutil.rmtree(suite / ".hypothesis", ignore_errors=True)  # no examples replayed from an earlier run
    if not any(_names_tests(a, suite) for a in pytest_args):
        pytest_args.append("array_api_tests")
    with tempfile.TemporaryDirectory() as tmp:
        # The suite takes each whole line as an id, so it gets the ids without the reasons.
        ids_file, report = Path(tmp) / "xfails.txt", Path(tmp) / "junit.xml"
        ids_file.write_text("".join(i + "\n" for i in xfail_ids))
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                   f"--xfails-file={ids_file}", f"--max-examples={args.max_examples}",
                   # Results, not speed: a first call that compiles a kernel must not fail a deadline.
                   "--hypothesis-disable-deadline", f"--junitxml={report}", *pytest_args]
        print("+", " ".join(command), flush=True)
        status = subprocess.run(command, cwd=suite, env=env).returncode
        counts = outcomes(report) if report.exists() else Counter()
    print(f"\nconformance of rocm_array on {args.device} (API {API_VERSION}, max-examples "
          f"{args.max_examples}, xfails {xfails_file.name}: {len(xfail_ids)} ids): "
          f"collected {sum(counts.values())}, passed {counts['passed']}, "
          f"failed {counts['failed'] + counts['error']}, skipped {counts['skipped']}, "
          f"xfailed {counts['xfailed']}")
    return status


if __name__ == "__main__":
    sys.exit(main())
