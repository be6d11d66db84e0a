"""The engine suite: a subset of the project's checks, run against a real engine.

Run by ``python_tests/test_engines.py``, ``test_engine_thrift.py`` and
``test_engine_standalone.py`` in a subprocess, once per engine they start on loopback, with
``SPARK_CDC_ENGINE_SUITE`` naming the engine (connect, thrift, cluster) and
``SPARK_CDC_TARGET`` the profile target that reaches it. dbt
runs in the suite's process (dbtRunner); its assertions read tables through the same target
(a Spark Connect session, the cluster's driver session, or SQL over Thrift).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support import dbt_invoker

from spark_cdc.targets import current_target, session_for
from spark_cdc_dev.project_copies import copy_project

ENGINE = os.environ.get("SPARK_CDC_ENGINE_SUITE", "")
PROJECT_DIR = Path(__file__).resolve().parents[2]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "only_on(*engines): run only on these engines (connect, thrift, cluster)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the tests marked ``only_on`` other engines (the summary counts them)."""
    kept, left_out = [], []
    for item in items:
        marker = item.get_closest_marker("only_on")
        (kept if marker is None or ENGINE in marker.args else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(scope="session")
def target():
    return current_target()


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("engine_suite") / "spark_cdc", PROJECT_DIR)


@pytest.fixture(scope="session")
def dbt(project: Path) -> Callable:
    return dbt_invoker(project)


@pytest.fixture(scope="session")
def query(target) -> Callable[[str], list[dict]]:
    """Rows of a SQL query on the target, as dicts (timestamps as datetime, zone-less UTC)."""
    if target.method == "thrift":
        from pyhive import hive

        from spark_cdc.engine.server import LOOPBACK
        from spark_cdc.targets import home_engine_state, is_home_engine

        host, port = target.host, target.port
        if is_home_engine(target):
            host, port = LOOPBACK, home_engine_state("thrift")["port"]
        connection = hive.connect(host=host, port=port, username="dbt")

        def run(sql: str) -> list[dict]:
            cursor = connection.cursor()
            cursor.execute(sql)
            if cursor.description is None:
                return []
            names = [column[0].split(".")[-1] for column in cursor.description]
            kinds = [column[1] for column in cursor.description]
            return [
                {
                    name: _typed(value, kind)
                    for name, kind, value in zip(names, kinds, row, strict=True)
                }
                for row in cursor.fetchall()
            ]

        return run
    spark = session_for(target)
    return lambda sql: [row.asDict() for row in spark.sql(sql).collect()]


def _typed(value, kind: str):
    if value is not None and kind == "TIMESTAMP_TYPE" and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    return value
