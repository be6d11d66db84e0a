"""Rerun idempotence: building a capability twice on the same input leaves every output table
identical (row count and a hash of the sorted rows), for snapshots on one day, hash CDC on one
date, change events after one landing, and schema drift with no new file.

Columns documented as run metadata are excluded from the comparison (RUN_METADATA); every other
column, process ids included, must be identical: a rerun that changes nothing stamps nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spark_cdc.change_events.landing import land_batch_files, land_initial_rows
from spark_cdc.generators.change_events import SCHEMA as TARGET
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc.generators.extracts import article_example, generate_extracts
from spark_cdc.generators.json_events import JsonEventSpec, write_batches
from spark_cdc.main_job import CHANGE_EVENT_SELECTION, EXAMPLE_SNAPSHOTS, SCHEMA_DRIFT_MODELS
from spark_cdc.table_state import digest

SCHEMA = "rerun_check"
# Columns that record when a run happened rather than what it decided: none of the capabilities
# needs one excluded today (each rerun leaves its run-stamped rows untouched); listed here so a
# future exception is written down.
RUN_METADATA: tuple[str, ...] = ()


@pytest.fixture(scope="module", autouse=True)
def own_schema(spark):
    """Every model of this module is built in its own schema."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARK_CDC_SCHEMA", SCHEMA)
        yield
    for schema in (SCHEMA, f"{SCHEMA}_restricted"):
        spark.sql(f"drop schema if exists {schema} cascade")


def _tables(spark, *, prefix: str = "", schema: str = SCHEMA) -> list[str]:
    return sorted(
        f"{schema}.{t.name}"
        for t in spark.catalog.listTables(schema)
        if t.name.startswith(prefix) and not t.isTemporary and t.tableType != "VIEW"
    )


def _digests(spark, tables: list[str]) -> dict[str, tuple[int, str]]:
    return {table: digest(spark, table, RUN_METADATA) for table in tables}


def _twice(spark, build, tables) -> None:
    build()
    first = _digests(spark, tables())
    build()
    second = _digests(spark, tables())
    assert first and second == first


def test_snapshots_on_one_day(spark, dbt):
    day = json.dumps({"source_day": 2})
    dbt("seed", "--select", "customer_states")
    dbt("run", "--select", "stg_customer_states", "--vars", day)

    def build():
        dbt("snapshot", "--select", *EXAMPLE_SNAPSHOTS, "--vars", day)

    _twice(spark, build, lambda: [f"{SCHEMA}.{name}" for name in EXAMPLE_SNAPSHOTS])


def test_hash_cdc_on_one_date(spark, dbt, tmp_path):
    dates = ("2019-06-18", "2019-06-19")
    generate_extracts(
        article_example(tuple(tmp_path / "synthetic" / d for d in dates), seed=3),
        show_progress=False,
    )
    variables = {"hash_cdc_landing_root": str(tmp_path)}
    select = ["--select", "stg_hash_cdc__synthetic+"]
    dbt("build", *select, "--vars", json.dumps({**variables, "hash_cdc_effective_date": dates[0]}))

    def build():
        day_two = json.dumps({**variables, "hash_cdc_effective_date": dates[1]})
        dbt("build", *select, "--vars", day_two)

    def tables():
        return [
            *_tables(spark, prefix="hash_cdc__"),
            *_tables(spark, prefix="hash_cdc__", schema=f"{SCHEMA}_restricted"),
        ]

    _twice(spark, build, tables)


def test_change_events_after_one_landing(spark, dbt, tmp_path):
    write_stream(StreamSpec(initial_rows=100, events=1_000, batches=3, seed=9), tmp_path, False)
    for table in ("landing.customers_change_events", "landing.customers_initial_rows"):
        spark.sql(f"drop table if exists {table}")
    land_initial_rows(
        spark, "landing.customers_initial_rows", tmp_path / "initial_state.jsonl", TARGET
    )
    land_batch_files(
        spark,
        "landing.customers_change_events",
        sorted((tmp_path / "batches").glob("batch-*.jsonl")),
    )

    def build():
        dbt("build", "--select", *CHANGE_EVENT_SELECTION["customers"])

    _twice(
        spark,
        build,
        lambda: (
            _tables(spark, prefix="change_events__") + _tables(spark, prefix="int_change_events__")
        ),
    )


def test_schema_drift_with_no_new_file(spark, dbt, tmp_path):
    write_batches(tmp_path, JsonEventSpec(events=3_000, event_types=4, batches=2, seed=4), 1, False)
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(tmp_path)}})

    def build():
        dbt("build", "--select", *SCHEMA_DRIFT_MODELS, "--vars", variables)

    def tables():
        return _tables(spark, prefix="schema_drift") + _tables(spark, prefix="int_schema_drift__")

    _twice(spark, build, tables)
    assert os.environ["SPARK_CDC_SCHEMA"] == SCHEMA
    assert any("schema_drift_silver__events__" in t for t in tables())
    assert Path(tmp_path, "manifest.json").exists()
