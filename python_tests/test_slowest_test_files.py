"""scripts/slowest_test_files.py: worker seconds per file and per tier from a JUnit report."""

from __future__ import annotations

import importlib.util

import pytest
from support import PROJECT_DIR

pytestmark = pytest.mark.unit

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="python_tests.test_a" name="test_one" time="10.5" />
<testcase classname="python_tests.test_a" name="test_two[x-y]" time="4.5" />
<testcase classname="python_tests.test_b" name="test_one" time="60" />
</testsuite></testsuites>
"""


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location(
        "slowest_test_files", PROJECT_DIR / "scripts" / "slowest_test_files.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seconds_per_test_file_and_tier(script, tmp_path, monkeypatch):
    report = tmp_path / "report.xml"
    report.write_text(REPORT)
    assert script.test_times(report) == {
        "python_tests/test_a.py::test_one": 10.5,
        "python_tests/test_a.py::test_two[x-y]": 4.5,
        "python_tests/test_b.py::test_one": 60.0,
    }
    assert script.file_times(report) == {"test_a.py": (15.0, 2), "test_b.py": (60.0, 1)}
    tiers = {"python_tests/test_a.py::test_one": "unit", "python_tests/test_b.py::test_one": "dbt"}
    monkeypatch.setattr(script, "tier_of_tests", lambda: tiers)
    assert script.tier_times(report) == {"unit": (10.5, 1), "gone": (4.5, 1), "dbt": (60.0, 1)}
