"""A run killed between a new table's first Delta commit and its catalog entry leaves an orphan
at the table's managed location; the next run's create must take it over, not fail on it."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from urllib.parse import urlparse

import pytest
from pyspark.sql import functions as F

from spark_cdc.change_events.landing import land_batch_files, read_batch_file
from spark_cdc.core.orphan_tables import create_empty, has_orphan, managed_location
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc.schema_drift.landed_files import _log, log_table
from spark_cdc.schema_drift.stream_monitor import ProgressRecorder

SCHEMA = "orphan_tables"


@pytest.fixture
def schema(spark):
    spark.sql(f"create schema if not exists {SCHEMA}")
    yield SCHEMA
    spark.sql(f"drop schema if exists {SCHEMA} cascade")


def _leave_orphan(spark, table: str) -> str:
    """What a killed create leaves: a Delta commit at the managed location, no catalog entry."""
    location = managed_location(spark, table)
    shutil.rmtree(urlparse(location).path, ignore_errors=True)
    spark.createDataFrame(
        [(7, "stale.json", "old")], "load_seq long, source_file string, bronze_id string"
    ).write.format("delta").save(location)
    return location


def test_an_orphan_is_told_from_a_table_and_from_nothing(spark, schema):
    spark.sql(f"create table {schema}.registered (id bigint) using delta")
    _leave_orphan(spark, f"{schema}.killed")
    assert has_orphan(spark, f"{schema}.killed")
    assert not has_orphan(spark, f"{schema}.registered")
    assert not has_orphan(spark, f"{schema}.never_written")


def test_the_bronze_file_log_takes_over_an_orphan_left_by_a_killed_run(spark, schema):
    log = log_table(f"{schema}.bronze")
    location = _leave_orphan(spark, log)
    with pytest.raises(Exception, match="DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"):
        spark.sql(f"create table if not exists {log} (load_seq bigint) using delta")
    _log(spark, log, [(1, "a.json", "b1"), (2, "b.json", "b1")])
    rows = sorted(tuple(r) for r in spark.table(log).collect())
    assert rows == [(1, "a.json", "b1"), (2, "b.json", "b1")]
    assert managed_location(spark, log) == location
    # The orphan's commit is kept in the table's history (version 0), replaced, not deleted.
    versions = [r.version for r in spark.sql(f"describe history {log}").collect()]
    assert min(versions) == 0 and len(versions) >= 3


def test_create_empty_takes_over_an_orphan_and_leaves_an_existing_table_alone(spark, schema):
    table = f"{schema}.created_empty"
    _leave_orphan(spark, table)
    create_empty(spark, table, "id bigint, name string")
    assert spark.table(table).count() == 0
    assert [(f.name, f.dataType.simpleString()) for f in spark.table(table).schema] == [
        ("id", "bigint"),
        ("name", "string"),
    ]
    spark.sql(f"insert into {table} values (1, 'a')")
    version = spark.sql(f"describe history {table} limit 1").first().version
    create_empty(spark, table, "other int")
    assert spark.sql(f"describe history {table} limit 1").first().version == version
    assert [tuple(r) for r in spark.table(table).collect()] == [(1, "a")]


def _leave_landing_orphan(spark, table: str, files: list) -> None:
    """What a first landing killed before its catalog entry leaves: its empty create's commit
    at the managed location (the load is an append of its own, after the catalog entry)."""
    frame = read_batch_file(spark, files[0]).withColumn("_batch_id", F.lit(0).cast("long"))
    frame.limit(0).write.format("delta").save(managed_location(spark, table))
    assert has_orphan(spark, table)


def test_a_landing_after_a_killed_first_landing_lands_every_file_once(spark, schema, tmp_path):
    write_stream(StreamSpec(initial_rows=0, events=30, batches=2), tmp_path, False)
    files = sorted((tmp_path / "batches").glob("batch-*.jsonl"))
    table = f"{schema}.landing"
    _leave_landing_orphan(spark, table, files)
    landing = land_batch_files(spark, table, files)
    assert landing.batch_ids == [0, 1]
    lines = sum(len(path.read_text().splitlines()) for path in files)
    assert spark.table(table).count() == lines
    assert land_batch_files(spark, table, files).batch_ids == []
    assert spark.table(table).count() == lines


def test_the_stream_progress_table_is_created_over_an_orphan(spark, schema, tmp_path):
    table = f"{schema}.stream_progress"
    _leave_orphan(spark, table)
    recorder = ProgressRecorder("q", tmp_path / "status.json", "p")
    now = datetime.now(UTC).replace(tzinfo=None)
    recorder.pending.put(("q1", "r1", 0, now, 5, 1.0, 2.0, 100, "p"))
    assert recorder.flush(spark, table) == 1
    assert spark.table(table).count() == 1


def test_progress_reports_whose_append_failed_are_written_by_the_next_flush(
    spark, schema, tmp_path
):
    table = f"{schema}.stream_progress_retried"
    spark.sql(f"create table {table} (query_id int) using delta")  # refuses the reports' schema
    recorder = ProgressRecorder("q", tmp_path / "status.json", "p")
    now = datetime.now(UTC).replace(tzinfo=None)
    recorder.pending.put(("q1", "r1", 0, now, 5, 1.0, 2.0, 100, "p"))
    with pytest.raises(Exception, match=r"(?i)schema"):
        recorder.flush(spark, table)
    spark.sql(f"drop table {table}")
    recorder.pending.put(("q1", "r1", 1, now, 7, 1.0, 2.0, 100, "p"))
    assert recorder.flush(spark, table) == 2
    assert sorted(row.batch_id for row in spark.table(table).collect()) == [0, 1]
    assert recorder.flush(spark, table) == 0
