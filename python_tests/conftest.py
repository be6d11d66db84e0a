"""Shared fixtures: one SparkSession per test process, on a fresh temporary warehouse."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parents[1]
# The project's profiles (as `make test` exports it), for what runs dbt or spark-cdc in-process.
os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
if "SPARK_CDC_ENGINE_SUITE" not in os.environ:
    # The suite runs on the embedded runtime of its own temporary home; the engine suite
    # (engine_suite/) runs in subprocesses of test_engines.py and test_engine_other_targets.py,
    # each on the engine it started.
    os.environ["SPARK_CDC_TARGET"] = "local"
    collect_ignore = ["engine_suite"]


@pytest.fixture(scope="session")
def spark_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Temporary SPARK_CDC_HOME (warehouse + Derby metastore) of this test process."""
    return tmp_path_factory.mktemp("spark_cdc_home")


@pytest.fixture(scope="session")
def spark(spark_home: Path) -> Iterator:
    """The test process's SparkSession: static settings are applied once, here."""
    from spark_cdc.runtime import get_or_create_session

    os.environ["SPARK_CDC_HOME"] = str(spark_home)
    session = get_or_create_session(home=spark_home)
    yield session
    session.stop()


def copy_project(destination: Path) -> Path:
    """Copy the dbt project (without local state) so a test can run and change it freely."""
    from spark_cdc.dbt_invoke import copy_project as copy

    return copy(destination, PROJECT_DIR)


def dbt_invoker(project: Path):
    """A function running ``dbt <args>`` in-process on ``project``; raises when it fails."""
    from spark_cdc.dbt_invoke import run_dbt

    def invoke(*args: str, expect_success: bool = True):
        return run_dbt(
            list(args),
            project_dir=project,
            profiles_dir=project / "profiles",
            expect_success=expect_success,
        )

    return invoke


@pytest.fixture(scope="session")
def dbt_project(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the dbt project, so in-process dbt runs write their target/ in a temp folder."""
    return copy_project(tmp_path_factory.mktemp("dbt_project") / "spark_cdc")


@pytest.fixture(scope="session")
def dbt(dbt_project: Path):
    """Run ``dbt <args>`` in-process on the shared session; raises when it fails."""
    return dbt_invoker(dbt_project)
