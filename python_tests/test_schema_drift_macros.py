"""The schema-drift SQL macros rendered without a warehouse: the run summary reads the feed's
silver log and its event groups' logs, as the tables found say."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from macro_render import Macros

pytestmark = pytest.mark.unit


class Relation(SimpleNamespace):
    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}"


LOG = Relation(schema="lake", identifier="schema_drift__events_silver_loads")


def _logs(tables: list[str], execute: bool = True) -> str:
    asked = []

    def run_query(sql: str) -> SimpleNamespace:
        asked.append(sql)
        return SimpleNamespace(rows=[("lake", name, False) for name in tables])

    macros = Macros(
        "schema_drift/schema_drift_marts.sql", extra={"execute": execute, "run_query": run_query}
    )
    sql = " ".join(str(macros.schema_drift_silver_logs(LOG)).split())
    if execute:
        assert asked == ["show tables in lake like 'schema_drift__events_silver_loads*'"]
    return sql


def test_the_feed_s_own_log_alone_is_the_relation_itself():
    assert _logs(["schema_drift__events_silver_loads"]) == str(LOG)
    assert _logs([], execute=False) == str(LOG)  # parsing: dbt sees the ref


def test_group_logs_are_read_beside_the_feed_s_own_and_look_alikes_are_not():
    sql = _logs(
        [
            "schema_drift__events_silver_loads__rest",
            "schema_drift__events_silver_loads",
            "schema_drift__events_silver_loads_backup",
            "schema_drift__events_silver_loads__orders",
        ]
    )
    tables = re.findall(r"from (\S+)", sql)
    assert tables == [
        "lake.schema_drift__events_silver_loads",
        "lake.schema_drift__events_silver_loads__orders",
        "lake.schema_drift__events_silver_loads__rest",
    ]
    assert sql.count("union all") == 2
    assert sql.count("select event_type, to_load_seq, silver_table, loaded_at") == 3


def test_no_log_yet_is_an_empty_relation_of_the_log_s_columns():
    sql = _logs(["schema_drift__events_bronze_like"])
    assert "where false" in sql
    assert re.findall(r"\) as (\w+)", sql) == [
        "event_type",
        "to_load_seq",
        "silver_table",
        "loaded_at",
    ]
