"""The test files that took the longest in the last `make test` (from its JUnit report,
build/test-results.xml): worker seconds and tests per file, longest first; with ``--tiers``,
worker minutes and tests per tier (each test's tier as ``pytest -m <tier>`` selects it).

Usage: ``.venv/bin/python scripts/slowest_test_files.py [REPORT] [--top N] [--tiers]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
REPORT = PROJECT_DIR / "build" / "test-results.xml"
TIERS = ("unit", "spark", "dbt", "engines", "docs")


def test_times(report: Path) -> dict[str, float]:
    """Seconds per test, by pytest's test id (``python_tests/test_x.py::test_y[...]``)."""
    times = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        times[f"{path}::{case.get('name')}"] = float(case.get("time", 0))
    return times


def file_times(report: Path) -> dict[str, tuple[float, int]]:
    """Per test file: (seconds, tests) summed over its test cases."""
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, int] = defaultdict(int)
    for test_id, time in test_times(report).items():
        name = test_id.split("::", 1)[0].rsplit("/", 1)[-1]
        seconds[name] += time
        tests[name] += 1
    return {name: (seconds[name], tests[name]) for name in seconds}


def tier_of_tests() -> dict[str, str]:
    """Each collected test's tier, as ``pytest --collect-only -m <tier>`` lists it."""
    tiers = {}
    for tier in TIERS:
        listed = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", tier],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        tiers.update({line.strip(): tier for line in listed.splitlines() if "::" in line})
    return tiers


def tier_times(report: Path) -> dict[str, tuple[float, int]]:
    """Per tier: (seconds, tests) of the report's tests (a test no longer collected: "gone")."""
    tiers = tier_of_tests()
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, int] = defaultdict(int)
    for test_id, time in test_times(report).items():
        tier = tiers.get(test_id, "gone")
        seconds[tier] += time
        tests[tier] += 1
    return {tier: (seconds[tier], tests[tier]) for tier in seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, default=REPORT)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--tiers", action="store_true", help="worker minutes per tier")
    args = parser.parse_args()
    times = sorted(file_times(args.report).items(), key=lambda item: -item[1][0])
    print(", ".join(f"{name} {sec:.0f} s ({n})" for name, (sec, n) in times[: args.top]))
    if args.tiers:
        by_tier = sorted(tier_times(args.report).items(), key=lambda item: -item[1][0])
        total = sum(sec for sec, _ in dict(by_tier).values())
        print(f"all: {total / 60:.1f} worker-min")
        for tier, (sec, n) in by_tier:
            print(f"{tier}: {sec / 60:.1f} worker-min ({n} tests)")


if __name__ == "__main__":
    main()
