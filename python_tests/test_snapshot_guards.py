"""Snapshot guard rails through real dbt runs: a bad high end date stops the run before anything
is written, and a snapshot with hard deletes refuses an empty source unless allowed."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from support import messages, module_schema

from spark_cdc_dev.table_state import versions

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

HARD_DELETES = ("customers_ts_invalidate", "customers_ts_new_record", "customers_check_all")
IGNORE = "customers_ts_ignore"
TABLES = tuple(f"{MODULE_SCHEMA}.{name}" for name in (*HARD_DELETES, IGNORE))
EMPTY_DAY = 9  # stg_customer_states shows no row for it


def _failure(result) -> str:
    """What a failed dbt command said: node messages, or the exception of a failed hook."""
    return messages(result) or str(result.exception)


@pytest.fixture(scope="module")
def day_one(spark, dbt) -> dict:
    for table in TABLES:
        spark.sql(f"drop table if exists {table}")
    dbt("seed", "--select", "customer_states")
    dbt("run", "--select", "stg_customer_states", "--vars", json.dumps({"source_day": 1}))
    dbt("snapshot", "--select", *HARD_DELETES, IGNORE, "--vars", json.dumps({"source_day": 1}))
    return versions(spark, TABLES)


def test_a_bad_high_end_date_stops_the_run_before_anything_is_written(spark, dbt, day_one):
    # Each kind of bad value and the words of its error: test_snapshot_macros.py (rendered).
    value, detail = "2020-02-30 00:00:00", "(no such date)"
    variables = json.dumps({"source_day": 2, "default_high_dttm": value})
    failed = dbt("snapshot", "--select", *HARD_DELETES, "--vars", variables, expect_success=False)
    assert not failed.success
    message = _failure(failed)
    assert "var default_high_dttm must be a zone-less timestamp" in message and detail in message
    assert versions(spark, TABLES) == day_one


def test_an_unquoted_yaml_datetime_is_accepted(spark, dbt, day_one):
    # YAML reads an unquoted 9999-12-31 23:59:59 as a datetime: it is taken as its text.
    result = dbt(
        "run",
        "--select",
        "stg_customer_states",
        "--vars",
        "{source_day: 1, default_high_dttm: 9999-12-31 23:59:59}",
        expect_success=False,
    )
    assert result.success, _failure(result)


def test_hard_deletes_refuse_an_empty_source_unless_allowed(spark, dbt, day_one):
    empty = json.dumps({"source_day": EMPTY_DAY})
    dbt("run", "--select", "stg_customer_states", "--vars", empty)
    refused = dbt(
        "snapshot", "--select", *HARD_DELETES, IGNORE, "--vars", empty, expect_success=False
    )
    message = _failure(refused)
    for name in HARD_DELETES:
        assert f"Snapshot {name}: the snapshot query returned no rows" in message
    assert "snapshot_allow_empty_source: true" in message
    after = versions(spark, TABLES)
    for table in TABLES:
        if not table.endswith(IGNORE):
            assert after[table] == day_one[table], table
    # With the override, the deletes go through: every open row is closed by this run.
    allowed = json.dumps({"source_day": EMPTY_DAY, "snapshot_allow_empty_source": True})
    dbt("snapshot", "--select", "customers_ts_invalidate", "--vars", allowed)
    rows = spark.table(f"{MODULE_SCHEMA}.customers_ts_invalidate").collect()
    assert rows and all(row.dbt_valid_to is not None for row in rows)
    assert all(row.dbt_valid_to_high < dt.datetime(9999, 1, 1) for row in rows)
