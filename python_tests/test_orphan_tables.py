"""A run killed between a new table's first Delta commit and its catalog entry leaves an orphan
at the table's managed location; the next run's create must take it over, not fail on it."""

from __future__ import annotations

import shutil
from urllib.parse import urlparse

import pytest

from spark_cdc.orphan_tables import has_orphan, managed_location
from spark_cdc.schema_drift.landed_files import _log, log_table

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
