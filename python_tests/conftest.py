"""Shared fixtures: one SparkSession per test process, on a fresh temporary warehouse."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import PROJECT_DIR, copy_project, dbt_invoker

# The project's profiles (as `make test` exports it), for what runs dbt or spark-cdc in-process.
os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
# Every driver the suite starts with spark-submit (in-process sessions, commands' processes, the
# engines) compiles a method with C2 only after three times the calls the JIT waits for by
# default: a test runs thousands of different small queries, and most of Spark's and the
# generated code runs too few times for a C2 compilation to pay for itself. Measured: 11-13%
# less JVM CPU time on the suite's own tests alone (C2 compiler threads 55 -> 37 s and 61 -> 43
# s, same or shorter wall time); the whole suite from a fresh clone 35.2 min instead of 38.1 an
# hour earlier (its CPU time 4,035 s instead of 4,368). The suite's two workers share two cores,
# so CPU time is what they wait for. It only changes when code is optimized. (spark-submit adds
# SPARK_SUBMIT_OPTS to the driver's java command; a SPARK_CONF_DIR would put a folder on the
# class path, which the class-data archive's would no longer match.) Added to the options the
# user's environment may already hold, once (the engine suite's processes load this file too).
JIT_OPTION = "-XX:CompileThresholdScaling=3"
# The same drivers collect garbage with the parallel collector instead of G1: no concurrent
# marking threads competing with the queries for the two cores, cheaper write barriers, and the
# pauses of a collector built for throughput do not matter to a test. Measured on four of the
# longest library files (127 tests, two workers, order alternated, 3 runs each): 479 s instead
# of 536 s of wall time, 883 s instead of 1,002 s of CPU time (-11%, -12%). Left out when the
# environment already picks a collector (two would stop the JVM from starting).
GC_OPTION = "-XX:+UseParallelGC"
SUBMIT_OPTIONS = os.environ.get("SPARK_SUBMIT_OPTS", "").split()
ADDED = [JIT_OPTION] if JIT_OPTION not in SUBMIT_OPTIONS else []
if not any(option.startswith("-XX:+Use") and option.endswith("GC") for option in SUBMIT_OPTIONS):
    ADDED.append(GC_OPTION)
if ADDED:
    os.environ["SPARK_SUBMIT_OPTS"] = " ".join([*SUBMIT_OPTIONS, *ADDED])
# Engines the tests start skip the warm-up (test_engines.py warms its own, as users' are).
os.environ["SPARK_CDC_ENGINE_WARMUP"] = "0"
if "SPARK_CDC_ENGINE_SUITE" not in os.environ:
    # The suite runs on the embedded runtime of its own temporary home; the engine suite
    # (engine_suite/) runs in subprocesses of test_engines.py, test_engine_thrift.py and
    # test_engine_standalone.py, each on the engine it started.
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


@pytest.fixture(scope="session")
def dbt_project(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the dbt project, so in-process dbt runs write their target/ in a temp folder."""
    return copy_project(tmp_path_factory.mktemp("dbt_project") / "spark_cdc")


@pytest.fixture(scope="session")
def dbt(dbt_project: Path):
    """Run ``dbt <args>`` in-process on the shared session; raises when it fails."""
    return dbt_invoker(dbt_project)


# The longest files first (measured from a fresh clone; see docs/development.md, Tests):
# pytest-xdist runs one file per worker (--dist loadfile, --no-loadscope-reorder keeps this
# order), so the long ones start early and the short ones fill in at the end instead of a long
# one running alone last.
LONGEST_FIRST = (
    "test_readme_commands.py",
    "test_engines.py",
    "test_change_events_dbt.py",
    "test_hash_cdc_dbt.py",
    "test_consumer_project.py",
    "test_hash_cdc_guards.py",
    "test_bad_input_matrix.py",
    "test_engine_standalone.py",
    "test_engine_homes.py",
    "test_snapshots_days.py",
    "test_readme_consumer_walk.py",
    "test_docs_pages.py",
    "test_engine_cancel.py",
    "test_schema_drift_dbt.py",
    "test_schema_drift_stream.py",
    "test_dbt_cli.py",
    "test_engine_thrift.py",
    "test_snapshot_maintenance.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files in LONGEST_FIRST order, then the others as collected (each file's tests in order)."""
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
