"""The suite's tiers (python_tests/conftest.py): each test in one, by what it starts."""

from __future__ import annotations

import json
import tomllib

import pytest
from conftest import DURATIONS, TIERS, file_order, longest_first, tier_of
from support import PROJECT_DIR

pytestmark = pytest.mark.unit
HERE = PROJECT_DIR / "python_tests"


@pytest.mark.parametrize(
    ("file", "fixtures", "marks", "tier"),
    [
        # rendered macros: no fixture, nothing in the file starts a JVM
        ("test_snapshot_macros.py", set(), set(), "unit"),
        # a file that starts commands in processes of their own is not the unit tier
        ("test_scaffold.py", set(), set(), "spark"),
        ("test_docs_pages.py", {"spark"}, set(), "docs"),
        ("test_readme_commands.py", set(), set(), "docs"),
        ("test_engines.py", {"tmp_path"}, {"cli"}, "engines"),
        ("test_snapshot_guards.py", {"spark", "dbt"}, set(), "dbt"),
        # dbt's command line in a subprocess
        ("test_project_conventions.py", {"tmp_path"}, set(), "dbt"),
        ("test_cache_slots.py", {"spark"}, set(), "spark"),
        # a test marked with a tier keeps it
        ("test_import_layers.py", set(), {"unit"}, "unit"),
    ],
)
def test_a_test_gets_the_tier_of_what_it_starts(file, fixtures, marks, tier):
    assert tier_of(HERE / file, fixtures, marks) == tier


def test_every_tier_is_a_declared_marker():
    settings = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())
    markers = settings["tool"]["pytest"]["ini_options"]["markers"]
    declared = {marker.split(":")[0] for marker in markers}
    assert set(TIERS) <= declared


def test_files_run_longest_first_by_their_recorded_durations_new_files_before_them():
    recorded = {
        "python_tests/test_a.py::test_one": 5.0,
        "python_tests/test_a.py::test_two[x]": 30.0,
        "python_tests/test_b.py::test_one": 20.0,
        "python_tests/test_gone.py::test_one": 99.0,
    }
    per_file = file_order(recorded)
    assert per_file["python_tests/test_a.py"] == 35.0
    paths = ["python_tests/test_b.py", "python_tests/test_new.py", "python_tests/test_a.py"]
    assert longest_first(paths, per_file) == [
        "python_tests/test_new.py",
        "python_tests/test_a.py",
        "python_tests/test_b.py",
    ]


def test_the_recorded_durations_are_pytest_splits_file_of_this_suite():
    recorded = json.loads(DURATIONS.read_text())
    files = {test_id.split("::", 1)[0] for test_id in recorded}
    assert all(seconds >= 0 for seconds in recorded.values())
    # Test ids as pytest names them from the project folder (pytest-split's --store-durations).
    assert files and all((PROJECT_DIR / path).is_file() for path in files), sorted(
        path for path in files if not (PROJECT_DIR / path).is_file()
    )
