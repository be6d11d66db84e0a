"""The test files that took the longest in the last `make test` (from its JUnit report,
build/test-results.xml): worker seconds and tests per file, longest first.

Usage: ``.venv/bin/python scripts/slowest_test_files.py [REPORT] [--top N]``
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

REPORT = Path(__file__).resolve().parents[1] / "build" / "test-results.xml"


def file_times(report: Path) -> dict[str, tuple[float, int]]:
    """Per test file: (seconds, tests) summed over its test cases."""
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, int] = defaultdict(int)
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = case.get("classname", "").split(".")[-1] + ".py"
        seconds[name] += float(case.get("time", 0))
        tests[name] += 1
    return {name: (seconds[name], tests[name]) for name in seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, default=REPORT)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    times = sorted(file_times(args.report).items(), key=lambda item: -item[1][0])
    print(", ".join(f"{name} {sec:.0f} s ({n})" for name, (sec, n) in times[: args.top]))


if __name__ == "__main__":
    main()
