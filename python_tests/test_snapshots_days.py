"""Example snapshots over the day-1 -> day-2 -> day-3 customer source, run with real dbt snapshot.

Day 1: customers 1-6. Day 2: 1 and 4 updated, 2 and 6 deleted, 7 inserted, 3 and 5 unchanged.
Day 3: 2 restored with its day-1 row (same updated_at), 3 updated, new column loyalty_tier.
Every metadata value is asserted row by row.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from dataclasses import dataclass, field

import pytest
from support import module_schema

from spark_cdc.cli.dbt_invoke import last_invocation_id
from spark_cdc_dev.main_job import EXAMPLE_SNAPSHOTS

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

SNAPSHOTS = EXAMPLE_SNAPSHOTS
HIGH = dt.datetime(9999, 12, 31, 23, 59, 59)
DAY1 = dt.datetime(2026, 1, 1, 8, 0)


@dataclass
class Day:
    """One snapshot run: its invocation id, wall-clock window and the tables after it."""

    invocation_id: str
    started: dt.datetime
    finished: dt.datetime
    tables: dict[str, list[dict]] = field(default_factory=dict)

    def covers(self, moment: dt.datetime) -> bool:
        return self.started <= moment <= self.finished


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _rows(spark, name: str) -> list[dict]:
    return [row.asDict() for row in spark.table(f"{MODULE_SCHEMA}.{name}").collect()]


def _run_day(spark, dbt, day: int) -> Day:
    day_vars = json.dumps({"source_day": day})
    dbt("run", "--select", "stg_customer_states", "--vars", day_vars)
    started = _utc_now()
    dbt("snapshot", "--select", *SNAPSHOTS, "--vars", day_vars)
    finished = _utc_now()
    result = Day(last_invocation_id(), started, finished)
    result.tables = {name: _rows(spark, name) for name in SNAPSHOTS}
    return result


@pytest.fixture(scope="module")
def days(spark, dbt) -> dict[int, Day]:
    for name in SNAPSHOTS:
        spark.sql(f"drop table if exists {MODULE_SCHEMA}.{name}")
    dbt("seed", "--select", "customer_states")
    return {day: _run_day(spark, dbt, day) for day in (1, 2, 3)}


def _of(rows: list[dict], customer_id: int, key: str = "dbt_valid_from") -> list[dict]:
    return sorted((r for r in rows if r["customer_id"] == customer_id), key=lambda r: r[key])


def _is_open(row: dict, valid_to: str = "dbt_valid_to") -> bool:
    return row[valid_to] is None or row[valid_to] == HIGH


def test_day1_every_row_inserted_open_with_day1_metadata(days):
    day1 = days[1]
    for name, rows in day1.tables.items():
        assert len(rows) == 6, name
        for row in rows:
            assert row["dbt_insert_process_id"] == day1.invocation_id, name
            assert day1.covers(row["dbt_inserted_at"]), name
            assert row["dbt_close_process_id"] is None and row["dbt_closed_at"] is None, name
            assert row["dbt_valid_to_high"] == HIGH, name


def test_rows_closed_on_day2_carry_day2_process_id_and_time(days):
    day1, day2 = days[1], days[2]
    final = days[3].tables
    for name in ("customers_ts_invalidate", "customers_ts_new_record", "customers_composite_key"):
        rows = final[name]
        for customer_id, new_updated_at in (
            (1, dt.datetime(2026, 1, 2, 9)),
            (4, dt.datetime(2026, 1, 2, 10)),
        ):
            old, new = _of(rows, customer_id)
            # Updates close at the business time of the new version (timestamp strategy).
            assert old["dbt_valid_to"] == new_updated_at == new["dbt_valid_from"], name
            assert old["dbt_valid_to_high"] == old["dbt_valid_to"], name
            assert old["dbt_close_process_id"] == day2.invocation_id, name
            assert day2.covers(old["dbt_closed_at"]), name
            assert old["dbt_insert_process_id"] == day1.invocation_id, name
            assert new["dbt_insert_process_id"] == day2.invocation_id, name
            assert _is_open(new) and new["dbt_valid_to_high"] == HIGH, name
        deleted_day1 = _of(rows, 6)[0]
        # Hard deletes close at the processing time of the run that saw them missing.
        assert deleted_day1["dbt_close_process_id"] == day2.invocation_id, name
        assert day2.covers(deleted_day1["dbt_valid_to"]), name
        assert deleted_day1["dbt_valid_to"] == deleted_day1["dbt_closed_at"], name


def test_rows_untouched_since_day1_keep_day1_metadata_and_stay_open(days):
    day1 = days[1]
    for name in ("customers_ts_ignore", "customers_ts_invalidate", "customers_ts_new_record"):
        (row,) = _of(days[3].tables[name], 5)
        assert row["dbt_insert_process_id"] == day1.invocation_id, name
        assert day1.covers(row["dbt_inserted_at"]), name
        assert row["dbt_valid_to"] is None and row["dbt_valid_to_high"] == HIGH, name
        assert row["dbt_close_process_id"] is None, name


def test_hard_deletes_ignore_keeps_deleted_keys_open(days):
    rows = days[3].tables["customers_ts_ignore"]
    assert len(rows) == 10
    for customer_id in (2, 6):
        (row,) = _of(rows, customer_id)
        assert row["dbt_valid_to"] is None and row["updated_at"] == DAY1


def test_hard_deletes_invalidate_closes_and_a_restore_opens_a_new_version(days):
    day2, day3 = days[2], days[3]
    rows = day3.tables["customers_ts_invalidate"]
    (farid,) = _of(rows, 6)
    assert not _is_open(farid) and farid["dbt_close_process_id"] == day2.invocation_id
    closed, restored = _of(rows, 2)
    assert day2.covers(closed["dbt_valid_to"])
    # The restored row carries its day-1 updated_at, which is before the deletion: it opens at
    # the processing time of day 3 (never before the close), with a dbt_scd_id of its own.
    assert restored["updated_at"] == DAY1 == restored["dbt_updated_at"]
    assert day3.covers(restored["dbt_valid_from"])
    assert restored["dbt_valid_from"] >= closed["dbt_valid_to"]
    assert restored["dbt_scd_id"] != closed["dbt_scd_id"]
    assert restored["dbt_insert_process_id"] == day3.invocation_id
    assert _is_open(restored) and restored["dbt_valid_to_high"] == HIGH


def test_hard_deletes_new_record_inserts_deletion_rows_with_the_deleted_values(days):
    day1, day2, day3 = days[1], days[2], days[3]
    rows = day3.tables["customers_ts_new_record"]
    assert {r["dbt_is_deleted"] for r in rows} == {"True", "False"}  # dbt's own strings
    original, deletion = _of(rows, 6)
    assert (
        original["dbt_is_deleted"] == "False"
        and original["dbt_close_process_id"] == day2.invocation_id
    )
    assert deletion["dbt_is_deleted"] == "True"
    assert (deletion["customer_name"], deletion["email"], deletion["segment"]) == (
        "Farid",
        "farid@example.com",
        "retail",
    )
    assert deletion["region"] == "US" and deletion["updated_at"] == DAY1
    assert deletion["dbt_valid_from"] == original["dbt_valid_to"]
    assert deletion["dbt_insert_process_id"] == day2.invocation_id
    assert _is_open(deletion) and deletion["dbt_valid_to_high"] == HIGH
    assert original["dbt_insert_process_id"] == day1.invocation_id

    original, deletion, restored = _of(rows, 2)
    assert (deletion["dbt_is_deleted"], restored["dbt_is_deleted"]) == ("True", "False")
    assert deletion["dbt_close_process_id"] == day3.invocation_id
    assert deletion["dbt_valid_to"] == restored["dbt_valid_from"]
    assert day3.covers(restored["dbt_valid_from"]) and _is_open(restored)
    assert len({original["dbt_scd_id"], deletion["dbt_scd_id"], restored["dbt_scd_id"]}) == 3


def test_check_all_with_valid_to_current_and_a_new_column(days):
    day3 = days[3]
    rows = day3.tables["customers_check_all"]
    open_rows = [r for r in rows if _is_open(r)]
    assert all(r["dbt_valid_to"] == HIGH for r in open_rows)
    assert sorted(r["customer_id"] for r in open_rows) == [1, 2, 3, 4, 5, 6, 7]
    # dbt's check strategy on all columns treats a new column as a change of every row.
    live = [r for r in open_rows if r["dbt_is_deleted"] != "True"]
    assert all(r["loyalty_tier"] in ("gold", "silver") for r in live)
    assert all(r["dbt_insert_process_id"] == day3.invocation_id for r in live)
    older = [r for r in rows if r["dbt_insert_process_id"] != day3.invocation_id]
    assert all(r["loyalty_tier"] is None for r in older)


def test_a_check_snapshot_run_has_one_processing_time(days):
    """Day 2 of the check strategy updates, deletes (new_record) and inserts: every time that
    run wrote (new versions' valid_from and inserted_at, closed versions' valid_to and closed_at,
    the deletion rows') is one instant, inside the run."""
    day2 = days[2]
    rows = day2.tables["customers_check_all"]
    inserted = [r for r in rows if r["dbt_insert_process_id"] == day2.invocation_id]
    closed = [r for r in rows if r["dbt_close_process_id"] == day2.invocation_id]
    # Day 2: 1 and 4 updated, 2 and 6 deleted, 7 inserted.
    assert sorted(r["customer_id"] for r in inserted) == [1, 2, 4, 6, 7]
    assert sorted(r["customer_id"] for r in closed) == [1, 2, 4, 6]
    times = {r["dbt_valid_from"] for r in inserted} | {r["dbt_inserted_at"] for r in inserted}
    times |= {r["dbt_valid_to"] for r in closed} | {r["dbt_closed_at"] for r in closed}
    assert len(times) == 1, sorted(times)
    assert day2.covers(times.pop())


def test_check_all_does_not_see_metadata_columns_as_changes(days):
    # Day 2 left customers 3 and 5 unchanged: check_cols all must ignore the metadata columns.
    day1, day2 = days[1], days[2]
    rows = day2.tables["customers_check_all"]
    for customer_id in (3, 5):
        (row,) = _of(rows, customer_id)
        assert row["dbt_insert_process_id"] == day1.invocation_id
        assert row["dbt_valid_to"] == HIGH


def test_renamed_meta_columns_and_check_cols(days):
    rows = days[3].tables["customers_check_cols_renamed"]
    assert {"valid_from", "valid_to", "version_id", "version_updated_at"} <= set(rows[0])
    assert "dbt_valid_from" not in rows[0]
    # Customer 1 changed email (tracked), customer 4 changed segment (tracked): new versions.
    assert len(_of(rows, 1, "valid_from")) == 2 and len(_of(rows, 4, "valid_from")) == 2
    # Customer 5 never changed: one version despite the new loyalty_tier column.
    assert len(_of(rows, 5, "valid_from")) == 1


def test_composite_key_never_leaks_helper_columns(days):
    for day in days.values():
        columns = set(day.tables["customers_composite_key"][0])
        assert not any(c.startswith("dbt_unique_key") for c in columns)
    rows = days[3].tables["customers_composite_key"]
    assert len(_of(rows, 2)) == 3  # original, deletion row, restored


def test_new_source_column_is_added_and_metadata_of_old_rows_is_kept(days):
    for name in SNAPSHOTS:
        before = {
            r["dbt_scd_id"] if "dbt_scd_id" in r else r["version_id"]: r
            for r in days[2].tables[name]
        }
        after = days[3].tables[name]
        assert "loyalty_tier" in after[0], name
        for row in after:
            scd_id = row.get("dbt_scd_id", row.get("version_id"))
            if scd_id in before and _is_open(
                before[scd_id], "dbt_valid_to" if "dbt_valid_to" in row else "valid_to"
            ):
                old = before[scd_id]
                assert row["dbt_insert_process_id"] == old["dbt_insert_process_id"], name
                assert row["dbt_inserted_at"] == old["dbt_inserted_at"], name


def test_validity_windows_never_overlap(days):
    for name, rows in days[3].tables.items():
        valid_from = "valid_from" if "valid_from" in rows[0] else "dbt_valid_from"
        valid_to = "valid_to" if "valid_to" in rows[0] else "dbt_valid_to"
        for customer_id in {r["customer_id"] for r in rows}:
            versions = _of(rows, customer_id, valid_from)
            for earlier, later in itertools.pairwise(versions):
                end = HIGH if _is_open(earlier, valid_to) else earlier[valid_to]
                assert end <= later[valid_from], (name, customer_id)
            assert sum(_is_open(v, valid_to) for v in versions) <= 1, (name, customer_id)


def test_rerun_without_source_change_changes_nothing(spark, dbt, days):
    dbt("snapshot", "--select", *SNAPSHOTS, "--vars", json.dumps({"source_day": 3}))
    rerun_id = last_invocation_id()
    for name in SNAPSHOTS:
        rows = _rows(spark, name)
        assert sorted(map(repr, rows)) == sorted(map(repr, days[3].tables[name])), name
        assert not any(
            rerun_id in (r["dbt_insert_process_id"], r["dbt_close_process_id"]) for r in rows
        )


def test_generic_snapshot_tests_pass_on_every_example(dbt, days):
    result = dbt("test", "--select", *SNAPSHOTS, "--vars", json.dumps({"source_day": 3}))
    tests = [r for r in result.result.results if r.node.resource_type == "test"]
    assert {str(r.status) for r in tests} == {"pass"}
    assert len(tests) == 6 * len(SNAPSHOTS)


def test_legacy_views_show_the_high_end_date_on_open_rows(spark, dbt, days):
    dbt("run", "--select", "customers_ts_new_record_legacy")
    legacy = spark.table(f"{MODULE_SCHEMA}.customers_ts_new_record_legacy")
    assert "dbt_valid_to_high" not in legacy.columns
    assert legacy.where("dbt_valid_to is null").count() == 0
    assert legacy.where("dbt_valid_to = timestamp'9999-12-31 23:59:59'").count() == sum(
        _is_open(r) for r in days[3].tables["customers_ts_new_record"]
    )
    assert {"dbt_insert_process_id", "dbt_close_process_id"} <= set(legacy.columns)


def test_small_tables_merge_by_rewriting_their_files_not_with_deletion_vectors(spark, days):
    """Under snapshot_deletion_vectors_min_mb (32 MB by default) a snapshot table gets no
    deletion vectors: its MERGEs rewrite the files they touch. customers_ts_new_record sets 0:
    it gets them at its first merging run."""
    for name in SNAPSHOTS:
        table = f"{MODULE_SCHEMA}.{name}"
        vectors = name == "customers_ts_new_record"
        properties = {r.key: r.value for r in spark.sql(f"show tblproperties {table}").collect()}
        assert properties.get("delta.enableDeletionVectors", "false") == str(vectors).lower(), name
        merges = [
            row["operationMetrics"]
            for row in spark.sql(f"describe history {table}").collect()
            if row["operation"] == "MERGE"
        ]
        assert len(merges) == 2, name  # days 2 and 3 both changed rows of every example
        for metrics in merges:
            assert (int(metrics["numTargetDeletionVectorsAdded"]) > 0) == vectors, name
            if not vectors:
                assert int(metrics["numTargetFilesRemoved"]) > 0, name
