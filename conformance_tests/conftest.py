"""dbt's adapter conformance suite (dbt-tests-adapter) on the ``sparkcdc`` session target.

A tier of its own (``make test-conformance``): dbt's ``project`` fixture writes a dbt project
per test class in a temporary folder, with a schema of its own, and runs dbt in-process on the
worker's embedded Spark session (Delta, Derby metastore, a home per worker). The classes are
dbt's ``Base*`` classes subclassed, as dbt-spark's ``tests/functional`` does. A class with
``spark_cdc_package = True`` installs the spark_cdc package (``local:`` this checkout, as a
team's packages.yml does) and dispatches to it first, as docs/use-in-your-project.md says.
dbt's fixture SQL and files run as Spark SQL (spark_dialect).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from dbt.tests.util import run_dbt, write_file
from spark_dialect import spark_project_file, spark_statements

if TYPE_CHECKING:
    from dbt.tests.fixtures.project import TestProjInfo

pytest_plugins = ["dbt.tests.fixtures.project"]

PROJECT_DIR = Path(__file__).resolve().parents[1]
# What docs/use-in-your-project.md tells a team to add to its dbt_project.yml (dbt's test
# project is named "test").
PACKAGE_DISPATCH = [{"macro_namespace": "dbt", "search_order": ["test", "spark_cdc", "dbt"]}]
# Every seed, model and snapshot on Delta, under the class's own settings: dbt-spark writes
# parquet unless told, and a snapshot or a merge incremental needs Delta (dbt-spark's functional
# tests set +file_format: delta class by class).
DELTA_EVERYWHERE = {
    "seeds": {"+file_format": "delta"},
    "models": {"+file_format": "delta"},
    "snapshots": {"+file_format": "delta"},
}


def with_package(cls: type) -> bool:
    """Whether a test class runs with the spark_cdc package installed."""
    return bool(getattr(cls, "spark_cdc_package", False))


def merged(base: dict, update: dict) -> dict:
    """``base`` with ``update`` merged in, nested dictionaries key by key."""
    result = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


@pytest.fixture(scope="session", autouse=True)
def spark_cdc_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This worker's SPARK_CDC_HOME (warehouse + Derby metastore), set before dbt's adapter
    starts the worker's one Spark session."""
    home = tmp_path_factory.mktemp("spark_cdc_home")
    before = os.environ.get("SPARK_CDC_HOME")
    os.environ["SPARK_CDC_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("SPARK_CDC_HOME", None)
    else:
        os.environ["SPARK_CDC_HOME"] = before


def with_delta_defaults(update_config_file):
    """dbt's update_config_file, Delta kept as the default of every node of dbt_project.yml
    (a test that replaces its ``snapshots:`` settings would otherwise drop it)."""

    def update(updates: dict, *paths: str) -> None:
        update_config_file(updates, *paths)
        if Path(*paths).name == "dbt_project.yml":
            config = yaml.safe_load(Path(*paths).read_text())
            write_file(yaml.safe_dump(merged(DELTA_EVERYWHERE, config)), *paths)

    return update


@pytest.fixture(scope="session", autouse=True)
def delta_kept_by_config_updates() -> Iterator[None]:
    """update_config_file with Delta kept, in every dbt test module that calls it."""
    import dbt.tests.adapter.simple_snapshot.test_various_configs as various_configs

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            various_configs,
            "update_config_file",
            with_delta_defaults(various_configs.update_config_file),
        )
        yield


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict:
    """The embedded runtime, as the project's ``local`` target and a team's ``dev`` target
    declare it (dbt's fixture adds the class's schema). dbt's fixtures create, update and
    delete tables with plain SQL (``create table ... as select``, ``delete from``): their
    sessions make Delta the default table format, the one Spark format that updates rows."""
    return {
        "type": "sparkcdc",
        "method": "session",
        "host": os.environ.get("SPARK_CDC_MASTER", "local[2]"),
        "threads": 1,
        "server_side_parameters": {"spark.sql.sources.default": "delta"},
    }


@pytest.fixture(scope="class")
def dbt_project_yml(request: pytest.FixtureRequest, project_root, project_config_update) -> dict:
    """dbt's dbt_project.yml fixture with Delta as every node's default and, for a class in
    package mode, the dispatch to spark_cdc."""
    config = {"name": "test", "profile": "test", "flags": {"send_anonymous_usage_stats": False}}
    config.update(DELTA_EVERYWHERE)
    if isinstance(project_config_update, str):
        project_config_update = yaml.safe_load(project_config_update)
    config = merged(config, project_config_update or {})
    if with_package(request.cls):
        config["dispatch"] = PACKAGE_DISPATCH
    write_file(yaml.safe_dump(config), project_root, "dbt_project.yml")
    return config


@pytest.fixture(scope="class")
def packages(request: pytest.FixtureRequest) -> dict:
    """spark_cdc from this checkout for a class in package mode."""
    if with_package(request.cls):
        return {"packages": [{"local": str(PROJECT_DIR)}]}
    return {}


@pytest.fixture(scope="class", autouse=True)
def installed_package(request: pytest.FixtureRequest) -> None:
    """``dbt deps`` for a class in package mode, once its files are written and before dbt's
    adapter fixture registers the adapter (deps runs without one and unregisters it)."""
    if not with_package(request.cls):
        return
    project_root = request.getfixturevalue("project_root")
    request.getfixturevalue("profiles_yml")
    request.getfixturevalue("packages_yml")
    request.getfixturevalue("dbt_project_yml")
    run_dbt(["deps", "--project-dir", str(project_root)])


@pytest.fixture(scope="class")
def project_files(
    project_root,
    models,
    macros,
    snapshots,
    properties,
    seeds,
    tests,
    analyses,
    functions,
    selectors_yml,
    dependencies_yml,
    packages_yml,
    dbt_project_yml,
) -> None:
    """dbt's project_files fixture, its models, snapshots, tests and macros in Spark's names."""
    from dbt.tests.fixtures.project import write_project_files

    def spark(files: dict) -> dict:
        return {
            name: spark_project_file(text) if isinstance(text, str) else spark(text)
            for name, text in files.items()
        }

    write_project_files(project_root, "models", spark({**models, **properties}))
    write_project_files(project_root, "macros", spark(macros))
    write_project_files(project_root, "snapshots", spark(snapshots))
    write_project_files(project_root, "seeds", seeds)
    write_project_files(project_root, "tests", spark(tests))
    write_project_files(project_root, "analyses", spark(analyses))
    write_project_files(project_root, "functions", functions)


@pytest.fixture(scope="class")
def project(project_setup: TestProjInfo, project_files) -> TestProjInfo:
    """dbt's project fixture whose run_sql runs dbt's fixture SQL as Spark SQL statements (the
    last one's rows returned)."""
    run_sql = project_setup.run_sql
    # A test that formats {database}.{schema} itself leaves Spark's database, None, in the name.
    formatted_two_part_name = f"{project_setup.database}.{project_setup.test_schema}."

    def run_spark_sql(sql: str, fetch: str | None = None):
        result = None
        sql = sql.replace(formatted_two_part_name, f"{project_setup.test_schema}.")
        for statement in spark_statements(sql):
            result = run_sql(statement, fetch=fetch)
        return result

    project_setup.run_sql = run_spark_sql  # type: ignore[method-assign]
    return project_setup
