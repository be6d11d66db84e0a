"""Progress marks (a change-event table's resolved batch, a hash-CDC table's applied date) are
trusted only on the commits that write rows: a session's ``userMetadata`` reaches DDL too, and
a run killed between its ALTER and its write left a mark that its data never made true."""

from __future__ import annotations

import pytest
from support import run_with_commit_metadata

from spark_cdc.change_events.progress import PROGRESS_KEY, USER_METADATA, resolved_through
from spark_cdc.hash_cdc.extracts import EFFECTIVE_DATE_KEY, applied_dates

SCHEMA = "progress_marks"


@pytest.fixture
def table(spark):
    spark.sql(f"create schema if not exists {SCHEMA}")
    name = f"{SCHEMA}.marked"
    spark.sql(f"drop table if exists {name}")
    yield name
    spark.conf.unset(USER_METADATA)
    spark.sql(f"drop table if exists {name}")


def test_a_mark_carried_by_an_alter_before_the_write_is_not_trusted(spark, table):
    run_with_commit_metadata(
        spark, {PROGRESS_KEY: 3}, f"create table {table} using delta as select 1 as id"
    )
    run_with_commit_metadata(
        spark,
        {PROGRESS_KEY: 4},
        f"merge into {table} t using (select 2 as id) s on t.id = s.id "
        "when not matched then insert *",
    )
    # The next run sets its mark, adds a discovered column, and is killed before its MERGE.
    run_with_commit_metadata(
        spark, {PROGRESS_KEY: 9}, f"alter table {table} add columns (tier string)"
    )
    run_with_commit_metadata(
        spark, {PROGRESS_KEY: 9}, f"alter table {table} set tblproperties ('a' = 'b')"
    )
    operations = [row.operation for row in spark.sql(f"describe history {table}").collect()]
    assert operations[:2] == ["SET TBLPROPERTIES", "ADD COLUMNS"]
    assert resolved_through(spark, table) == 4
    # Its rerun writes: then the mark is true.
    run_with_commit_metadata(spark, {PROGRESS_KEY: 9}, f"insert into {table} values (3, 'gold')")
    assert resolved_through(spark, table) == 9


def test_an_applied_date_carried_by_an_alter_is_not_an_applied_date(spark, table):
    day_1 = {EFFECTIVE_DATE_KEY: "2026-01-01"}
    run_with_commit_metadata(spark, day_1, f"create table {table} using delta as select 1 as id")
    day_2 = {EFFECTIVE_DATE_KEY: "2026-01-02"}
    run_with_commit_metadata(spark, day_2, f"alter table {table} add columns (x int)")
    assert [date for _, date in applied_dates(spark, table)] == ["2026-01-01"]


def test_a_restore_takes_the_mark_back_to_the_version_it_restored(spark, table):
    # Recovering from a bad run by hand: `restore table ... to version as of N` undoes the later
    # commits, their marks too; the next run goes on from the restored version's mark.
    run_with_commit_metadata(
        spark, {PROGRESS_KEY: 3}, f"create table {table} using delta as select 1 as id"
    )
    run_with_commit_metadata(spark, {PROGRESS_KEY: 5}, f"insert into {table} values (2)")
    run_with_commit_metadata(spark, {PROGRESS_KEY: 8}, f"insert into {table} values (3)")
    spark.sql(f"restore table {table} to version as of 1")
    assert resolved_through(spark, table) == 5
    spark.sql(f"restore table {table} to version as of 0")
    assert resolved_through(spark, table) == 3
    run_with_commit_metadata(spark, {PROGRESS_KEY: 6}, f"insert into {table} values (4)")
    assert resolved_through(spark, table) == 6
