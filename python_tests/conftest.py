"""Shared fixtures: one SparkSession per test process, on a fresh temporary warehouse."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pyspark.core.context as spark_context
import pytest
from support import PROJECT_DIR, copy_project, dbt_invoker, module_schema

# The project's profiles (as `make test` exports it), for what runs dbt or spark-cdc in-process.
os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
# Every JVM the suite starts with spark-submit gets options for a test run on two shared cores
# (spark-submit adds SPARK_SUBMIT_OPTS to the driver's java command; a SPARK_CONF_DIR would put a
# folder on the class path, which the class-data archive's would no longer match). The two
# workers share two cores, so CPU time is what the suite waits for. Each option is added to the
# options the user's environment held when the suite started (kept in SUITE_BASE_OPTIONS for the
# processes the tests start, which load this file too), once; none changes what a query
# computes, only when code is compiled and how memory is freed.
#
# - The parallel collector instead of G1: no concurrent marking threads competing with the
#   queries, cheaper write barriers; the pauses of a collector built for throughput do not
#   matter to a test. Four of the longest library files (127 tests, two workers, order
#   alternated, 3 runs each): 479 s instead of 536 s of wall time, 883 s instead of 1,002 s of
#   CPU time. Left out when the environment already picks a collector (two stop the JVM).
# - A JVM started in a test process itself (the workers' sessions: long-lived, the library
#   tests and in-process dbt) compiles a method with C2 only after three times the calls the
#   JIT waits for by default: a test runs thousands of different small queries whose code runs
#   too few times for C2 to pay back. Measured: 11-13% less JVM CPU time (C2 threads 55 -> 37 s
#   and 61 -> 43 s), the whole suite 35.2 min instead of 38.1. Set where pyspark launches its
#   JVM, whichever path gets there first (the spark fixture, dbt's adapter, a command's main).
# - Every other process (the commands' own JVMs, engines, servers: the environment they
#   inherit) compiles with C1 only: most live less than a minute and spent about half their CPU
#   time in the compilers. README blocks, docs pages and separate dbt commands (35 tests, two
#   workers, order alternated, 2 runs each): 245 s instead of 304 s of wall time, 434 s instead
#   of 586 s of CPU time. A larger code cache, since C1's code is bigger and a full cache stops
#   compiling.
SUITE_BASE_OPTIONS = "SPARK_CDC_SUITE_BASE_SUBMIT_OPTS"
COLLECTOR = "-XX:+UseParallelGC"
IN_PROCESS_JIT = ("-XX:CompileThresholdScaling=3",)
SUBPROCESS_JIT = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=512m")
BASE_OPTIONS = os.environ.setdefault(SUITE_BASE_OPTIONS, os.environ.get("SPARK_SUBMIT_OPTS", ""))


def submit_options(*added: str) -> str:
    """The user's SPARK_SUBMIT_OPTS with ``added`` and the collector (each once)."""
    options = BASE_OPTIONS.split()
    if not any(option.startswith("-XX:+Use") and option.endswith("GC") for option in options):
        options.append(COLLECTOR)
    options += [option for option in added if option not in options]
    return " ".join(options)


def launched_with_in_process_options(launch: Callable) -> Callable:
    """``launch`` (pyspark's JVM launcher) run with the in-process JVM's options."""

    @functools.wraps(launch)
    def launch_in_process(*args, **kwargs):
        inherited = os.environ["SPARK_SUBMIT_OPTS"]
        os.environ["SPARK_SUBMIT_OPTS"] = submit_options(*IN_PROCESS_JIT)
        try:
            return launch(*args, **kwargs)
        finally:
            os.environ["SPARK_SUBMIT_OPTS"] = inherited

    return launch_in_process


os.environ["SPARK_SUBMIT_OPTS"] = submit_options(*SUBPROCESS_JIT)
# SparkContext calls the launcher by the name its module imported.
spark_context.launch_gateway = launched_with_in_process_options(spark_context.launch_gateway)
# Engines the tests start skip the warm-up (test_engines.py warms its own, as users' are).
os.environ["SPARK_CDC_ENGINE_WARMUP"] = "0"
if "SPARK_CDC_ENGINE_SUITE" not in os.environ:
    # The suite runs on the embedded runtime of its own temporary home; the engine suite
    # (engine_suite/) runs in subprocesses of test_engines.py, test_engine_thrift.py and
    # test_engine_standalone.py, each on the engine it started.
    os.environ["SPARK_CDC_TARGET"] = "local"
    collect_ignore = ["engine_suite"]


@pytest.fixture(scope="module", autouse=True)
def module_schema_in_profile(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module's own schema (support.module_schema) as the profile's while its tests run:
    what dbt and the library build in-process lands there, so no test finds or drops another
    module's tables whatever the order of the files. (Commands in processes of their own get
    the default schema: support.command_env drops SPARK_CDC_* variables; the engine suite runs
    on an engine of its own.) A module that runs the docs' commands as written, which name the
    default schema, says so with ``PROFILE_SCHEMA = "spark_cdc"``; it is then the only one there."""
    if "SPARK_CDC_ENGINE_SUITE" in os.environ:
        yield os.environ.get("SPARK_CDC_SCHEMA", "spark_cdc")
        return
    schema = getattr(request.module, "PROFILE_SCHEMA", None) or module_schema(str(request.path))
    before = os.environ.get("SPARK_CDC_SCHEMA")
    os.environ["SPARK_CDC_SCHEMA"] = schema
    try:
        yield schema
    finally:
        if before is None:
            os.environ.pop("SPARK_CDC_SCHEMA", None)
        else:
            os.environ["SPARK_CDC_SCHEMA"] = before


@pytest.fixture(scope="session")
def spark_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Temporary SPARK_CDC_HOME (warehouse + Derby metastore) of this test process."""
    return tmp_path_factory.mktemp("spark_cdc_home")


@pytest.fixture(scope="session")
def spark(spark_home: Path) -> Iterator:
    """The test process's SparkSession: static settings are applied once, here."""
    from spark_cdc.session.runtime import get_or_create_session

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


# The longest files first: pytest-xdist runs one file per worker (--dist loadfile;
# --no-loadscope-reorder keeps this order), so the long ones start early and the short ones fill
# in at the end instead of a long one running alone last. Each file's length is the sum of its
# tests' seconds in DURATIONS, pytest-split's file of recorded durations (recorded by
# `PYTEST_ADDOPTS="--store-durations --clean-durations" make test`; pytest-split's
# `--splits N --group K` reads it too). A file it does not know yet goes first: it may be long.
DURATIONS = PROJECT_DIR / ".test_durations"


def file_order(durations: dict[str, float]) -> dict[str, float]:
    """Seconds per test file (its path in the test ids) summed from pytest-split's durations."""
    per_file: dict[str, float] = {}
    for test_id, seconds in durations.items():
        path = test_id.split("::", 1)[0]
        per_file[path] = per_file.get(path, 0.0) + seconds
    return per_file


def longest_first(paths: list[str], per_file: dict[str, float]) -> list[str]:
    """``paths`` (each once) ordered for the workers: files with no recorded time first, in the
    order given, then the recorded ones longest first."""
    unknown = [path for path in paths if path not in per_file]
    known = sorted((path for path in paths if path in per_file), key=lambda p: -per_file[p])
    return unknown + known


def _relative(item: pytest.Item) -> str:
    return item.path.relative_to(PROJECT_DIR).as_posix()


def _recorded_durations() -> dict[str, float]:
    if not DURATIONS.exists():
        return {}
    return json.loads(DURATIONS.read_text())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files longest first (longest_first; each file's tests in the order collected); every test
    marked with its tier (tier_of)."""
    paths = [_relative(item) for item in items]
    order = longest_first(list(dict.fromkeys(paths)), file_order(_recorded_durations()))
    rank = {path: index for index, path in enumerate(order)}
    items.sort(key=lambda item: rank[_relative(item)])
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        marks = {mark.name for mark in item.iter_markers()}
        tier = tier_of(item.path, fixtures, marks)
        if tier not in marks:
            item.add_marker(getattr(pytest.mark, tier))


# The suite's tiers (`pytest -m <tier>`; `make test-fast` is the unit tier), each test in one:
# - unit: starts no JVM: uses none of these fixtures, in a file that starts Spark no other way
#   (a session of its own, a command in a subprocess);
# - docs: the README's and the docs pages' commands run as written (test_readme_*, test_docs_*);
# - engines: the warm engine, Thrift, a standalone cluster, their homes (test_engine*);
# - dbt: real dbt runs (the dbt fixtures, dbt's command line, dbt invoked in a file's own way);
# - spark: the library on a real SparkSession (or its commands in processes of their own),
#   without dbt.
TIERS = ("unit", "docs", "engines", "dbt", "spark")
JVM_FIXTURES = {"spark", "spark_home", "dbt", "dbt_project"}
DBT_FIXTURES = {"dbt", "dbt_project"}
_STARTS_SPARK = re.compile(
    r"get_or_create_session|SparkSession|subprocess|run_command|\bBIN\b|from servers"
    r"|engine_suite|stream_support|change_event_support|main_job|spark_cdc\.cli|run_dbt"
)
_RUNS_DBT = re.compile(
    r"dbt_invoker|run_dbt|dbtRunner|BIN / \"dbt\"|\"dbt\", \"(build|run|snapshot|seed|test)"
)


def tier_of(path: Path, fixtures: set[str], marks: set[str]) -> str:
    """The tier of a test of the file ``path`` that uses ``fixtures`` and carries ``marks`` (a
    tier it is marked with itself: that one)."""
    for tier in TIERS:
        if tier in marks:
            return tier
    if not JVM_FIXTURES & fixtures and not _starts_spark(path):
        return "unit"
    if path.name.startswith(("test_readme_", "test_docs_")):
        return "docs"
    if path.name.startswith("test_engine"):
        return "engines"
    if DBT_FIXTURES & fixtures or "cli" in marks or _RUNS_DBT.search(_text(path)):
        return "dbt"
    return "spark"


@functools.cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _starts_spark(path: Path) -> bool:
    return bool(_STARTS_SPARK.search(_text(path)))


def pytest_configure(config: pytest.Config) -> None:
    """On the unit tier, starting a JVM in-process fails the test that tries."""
    if config.getoption("markexpr", "") == "unit":

        def refuse(*args, **kwargs):
            raise RuntimeError("the unit tier starts no JVM")

        spark_context.launch_gateway = refuse
