"""Hash CDC end to end: generator -> day 1 -> day 2 -> day 3 through dbt build, then reruns,
an out-of-order date, and a day with bad rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support import messages, module_schema, table_digests

from spark_cdc.generators.extracts import article_example, generate_extracts
from spark_cdc.hash_cdc.compare import HISTORY_TABLE_PROPERTIES, TABLE_PROPERTIES
from spark_cdc_dev.main_job import hash_cdc_tables

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

DATES = ["2019-06-18", "2019-06-19", "2019-06-20"]
SELECT = ["--select", "stg_hash_cdc__synthetic+"]


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("landing")
    spec = article_example(tuple(root / "synthetic" / date for date in DATES), seed=7)
    generate_extracts(spec, show_progress=False)
    return root


def _build(dbt, landing: Path, date: str, expect_success: bool = True, **extra):
    variables = {"hash_cdc_effective_date": date, "hash_cdc_landing_root": str(landing), **extra}
    return dbt("build", *SELECT, "--vars", json.dumps(variables), expect_success=expect_success)


# What the run summaries of clean extracts say of the mass-delete guard and of held keys.
GUARD_FIGURES = {
    "unidentified_rows": 0,
    "delete_rows": 0,  # a full extract has no operation column
    "held_keys": 0,
    "deletes_deferred": 0,
    "live_keys_before": 10_000,
    "delete_fraction": 0.0,
    "mass_delete_allowed": False,
}


def _summary(spark, date: str) -> dict:
    rows = spark.sql(
        f"select * from {MODULE_SCHEMA}.hash_cdc__synthetic_run_summary where eff_date = '{date}'"
    ).collect()
    assert len(rows) == 1
    row = rows[0].asDict()
    row.pop("eff_date")
    return row


def _history_counts(spark, date: str) -> dict:
    rows = spark.sql(
        f"select operation, count(*) as n from {MODULE_SCHEMA}.hash_cdc__synthetic_history "
        f"where eff_start_date = '{date}' group by operation"
    ).collect()
    return {r.operation: r.n for r in rows}


def _current(spark) -> list[tuple]:
    rows = spark.table(f"{MODULE_SCHEMA}.hash_cdc__synthetic_current").collect()
    return sorted(tuple(r) for r in rows)


def _every_table(spark) -> dict:
    return {
        **table_digests(spark, MODULE_SCHEMA, "hash_cdc__"),
        **table_digests(spark, f"{MODULE_SCHEMA}_restricted", "hash_cdc__"),
    }


@pytest.fixture(scope="module")
def three_days(spark, dbt, landing) -> dict[str, list[tuple]]:
    for table in hash_cdc_tables(MODULE_SCHEMA):
        spark.sql(f"drop table if exists {table}")
    states = {}
    for date in DATES:
        _build(dbt, landing, date)
        states[date] = _current(spark)
    return states


def test_operation_counts_match_the_generator_exactly(spark, three_days):
    assert _summary(spark, DATES[0]) == {
        **GUARD_FIGURES,
        "live_keys_before": 0,
        "rows_in": 10_000,
        "valid_rows": 10_000,
        "quarantined_rows": 0,
        "inserted": 10_000,
        "updated": 0,
        "deleted": 0,
        "not_supplied": 0,
        "unchanged": 0,
    }
    for date in DATES[1:]:
        assert _summary(spark, date) == {
            **GUARD_FIGURES,
            "delete_fraction": 0.2,
            "rows_in": 10_000,
            "valid_rows": 10_000,
            "quarantined_rows": 0,
            "inserted": 2_000,
            "updated": 4_000,
            "deleted": 2_000,
            "not_supplied": 0,
            "unchanged": 4_000,
        }
        assert _history_counts(spark, date) == {"I": 2_000, "U": 4_000, "D": 2_000}
    assert _history_counts(spark, DATES[0]) == {"I": 10_000}
    current = spark.table(f"{MODULE_SCHEMA}.hash_cdc__synthetic_current")
    # 10,000 supplied keys plus the tombstones of both days' 2,000 deletions.
    assert current.count() == 14_000
    assert current.where("operation = 'D'").count() == 4_000


def test_delta_statistics_cover_the_operation_and_date_only(spark, three_days):
    def stats_columns(table: str) -> str:
        properties = spark.sql(f"show tblproperties {MODULE_SCHEMA}.{table}").collect()
        return {r.key: r.value for r in properties}.get("delta.dataSkippingStatsColumns")

    # The dbt models configure what the library declares (the history's in its SQL config).
    stats = "delta.dataSkippingStatsColumns"
    assert stats_columns("hash_cdc__synthetic_current") == "operation,eff_start_date"
    assert stats_columns("hash_cdc__synthetic_current") == TABLE_PROPERTIES[stats]
    assert stats_columns("hash_cdc__synthetic_history") == "operation"
    assert stats_columns("hash_cdc__synthetic_history") == HISTORY_TABLE_PROPERTIES[stats]


def test_sensitive_columns_live_in_their_own_table(spark, three_days):
    current = spark.table(f"{MODULE_SCHEMA}.hash_cdc__synthetic_current")
    assert "attr_10" not in current.columns
    sensitive = spark.table(f"{MODULE_SCHEMA}_restricted.hash_cdc__synthetic_sensitive")
    assert set(sensitive.columns) == {"key_hash", "attr_10", "supplied_on"}
    live = current.where("operation != 'D'").select("key_hash")
    assert live.join(sensitive, "key_hash", "left_anti").count() == 0


def test_rerunning_a_date_is_idempotent(spark, dbt, landing, three_days):
    before = _summary(spark, DATES[2])
    every_table = _every_table(spark)
    _build(dbt, landing, DATES[2])
    assert _current(spark) == three_days[DATES[2]]
    assert _summary(spark, DATES[2]) == before
    # Every table of the dataset (current, history, sensitive, quarantine, summaries) as it
    # was, process ids included.
    assert _every_table(spark) == every_table
    assert _history_counts(spark, DATES[2]) == {"I": 2_000, "U": 4_000, "D": 2_000}


def test_an_older_date_is_refused_unless_forced(spark, dbt, landing, three_days):
    refused = _build(dbt, landing, DATES[1], expect_success=False)
    assert not refused.success
    assert "older than the latest applied date 2019-06-20" in messages(refused)
    assert _current(spark) == three_days[DATES[2]]
    _build(dbt, landing, DATES[1], hash_cdc_force=True)
    assert _current(spark) == three_days[DATES[1]]
    _build(dbt, landing, DATES[2])
    assert _current(spark) == three_days[DATES[2]]


def test_bad_rows_are_quarantined_with_reasons_and_counts_reconcile(
    spark, dbt, landing, three_days
):
    day3 = landing / "synthetic" / DATES[2]
    day4 = landing / "synthetic" / "2019-06-21"
    day4.mkdir()
    with (day3 / "part-00000.csv").open() as source:
        rows = list(csv.reader(source))
    header, body = rows[0], rows[1:]
    bad = [
        ["", *body[0][1:]],  # null key_1
        ["fresh-key", *body[1][1:5], "not-a-number", *body[1][6:]],  # attr_1 does not cast
        body[2],  # key of body[2] twice: both copies quarantined
    ]
    with (day4 / "part-00000.csv").open("w", newline="") as target:
        csv.writer(target).writerows([header, *body, *bad])
    _build(dbt, landing, "2019-06-21")
    summary = _summary(spark, "2019-06-21")
    assert summary["rows_in"] == 10_003
    assert summary["quarantined_rows"] == 4
    assert summary["valid_rows"] == 9_999
    assert summary["rows_in"] == summary["valid_rows"] + summary["quarantined_rows"]
    reasons = sorted(
        r.quarantine_reason
        for r in spark.sql(
            f"select quarantine_reason from {MODULE_SCHEMA}.hash_cdc__synthetic_quarantine "
            "where eff_date = '2019-06-21'"
        ).collect()
    )
    assert reasons == ["cast_failed:attr_1", "duplicate_key", "duplicate_key", "null_key:key_1"]
