"""The project's conventions (dbt-project-evaluator's rules, as dbt-bouncer checks with the same
exceptions): every check passes on a fresh `dbt parse`, and a change that breaks a rule fails."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from support import BIN, PROJECT_DIR, command_env, copy_project, run_command

CONFIG = PROJECT_DIR / "docs_check" / "dbt-bouncer.yml"


def _parse(project: Path, home: Path) -> None:
    """`dbt parse` of ``project`` (no engine is started: parsing reads files only)."""
    env = command_env(home, profiles=project / "profiles", SPARK_CDC_TARGET="local")
    done = run_command([str(BIN / "dbt"), "parse", "--project-dir", str(project)], env, project)
    assert done.returncode == 0, done.stdout + done.stderr


def _bouncer(project: Path) -> tuple[int, str]:
    env = command_env(DBT_PROJECT_DIR=str(project), COLUMNS="200", NO_COLOR="1")
    done = run_command(
        [str(BIN / "dbt-bouncer"), "run", "--config-file", str(CONFIG), "--show-all-failures"],
        env,
        project,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("conventions") / "spark_cdc")


def test_every_check_passes_on_the_project(project, tmp_path):
    _parse(project, tmp_path / "home")
    code, output = _bouncer(project)
    assert code == 0, output
    passed = re.search(r"SUCCESS=(\d+) WARN=0 ERROR=0", output)
    # Checks ran on every node, not on an empty selection.
    assert passed and int(passed.group(1)) > 300, output


def test_an_undescribed_untested_model_breaks_the_rules(project, tmp_path):
    extra = project / "models" / "marts" / "customers_without_docs.sql"
    extra.write_text("select 1 as id\n")
    try:
        _parse(project, tmp_path / "home")
        code, output = _bouncer(project)
    finally:
        extra.unlink()
    assert code != 0
    failed = set(re.findall(r"(check_\w+):\d+:customers_without_docs", output))
    assert {
        "check_model_description_populated",
        "check_model_has_unique_test",
        "check_model_has_no_upstream_dependencies",
    } <= failed, output


def test_each_evaluator_exception_says_why_and_loads_as_a_seed():
    """The evaluator's exceptions seed: a rule, a column, a pattern and a reason on every row,
    and no single quote (dbt-spark's seed loader writes values into SQL literals unescaped)."""
    path = PROJECT_DIR / "docs_check" / "seeds" / "dbt_project_evaluator_exceptions.csv"
    rows = list(csv.DictReader(path.open()))
    assert rows and all(row["fct_name"].startswith("fct_") for row in rows)
    assert all(row["column_name"] and row["id_to_exclude"] for row in rows)
    assert all(len(row["comment"]) > 20 for row in rows)
    assert "'" not in path.read_text()
