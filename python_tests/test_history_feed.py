"""The versions written after a mark, from a history's Change Data Feed: which commits it spans,
when it must not answer, and what it returns against a real Delta table."""

from __future__ import annotations

import json
import re
from collections import namedtuple
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from macro_render import Macros
from support import run_with_commit_metadata

from spark_cdc.change_events.history_feed import (
    RETENTION_PROPERTY,
    feed_range,
    oldest_readable,
    retention,
    versions_since,
)
from spark_cdc.change_events.progress import PROGRESS_KEY, USER_METADATA
from spark_cdc.core.table_names import table_name

Commit = namedtuple("Commit", "version timestamp operation operationParameters userMetadata")
SCHEMA = "history_feed"
FEED_MACRO = "change_events/change_events_history_feed.sql"


NOW = datetime.now(UTC).replace(tzinfo=None)


def _commit(version: int, operation: str, mark: int | None = None, days_ago: int = 1) -> Commit:
    metadata = None if mark is None else json.dumps({PROGRESS_KEY: mark})
    return Commit(version, NOW - timedelta(days=days_ago), operation, {}, metadata)


def test_the_range_starts_at_the_first_write_above_the_mark_and_ends_at_the_latest_commit():
    commits = [
        _commit(0, "CREATE OR REPLACE TABLE AS SELECT", 3),
        _commit(1, "MERGE", 4),
        _commit(2, "MERGE", 6),
        _commit(3, "OPTIMIZE"),
        _commit(4, "MERGE", 7),
    ]
    assert feed_range(commits, 4) == (2, 4)
    assert feed_range(commits, 3) == (1, 4)
    # A reader of mark 5 reflects version 1 (mark 4): it reads from version 2 on.
    assert feed_range(commits, 5) == (2, 4)


def test_nothing_above_the_mark_is_an_empty_range():
    commits = [_commit(0, "CREATE TABLE AS SELECT", 3), _commit(1, "MERGE", 5)]
    assert feed_range(commits, 5) is False


@pytest.mark.parametrize(
    "operation",
    ["SET TBLPROPERTIES", "ADD COLUMNS", "CREATE OR REPLACE TABLE AS SELECT", "DELETE"],
)
def test_a_commit_in_the_range_that_is_not_a_plain_row_write_leaves_the_answer_to_the_table(
    operation,
):
    commits = [
        _commit(0, "CREATE TABLE AS SELECT", 3),
        _commit(1, "MERGE", 4),
        _commit(2, operation, 5),
        _commit(3, "MERGE", 6),
    ]
    assert feed_range(commits, 3) is None
    assert feed_range(commits, 4) is None
    # A change before the reader's point does not matter (the feed was on since).
    before = [
        _commit(0, "CREATE TABLE AS SELECT", 3),
        _commit(1, operation, 4),
        _commit(2, "MERGE", 4),
        _commit(3, "MERGE", 6),
    ]
    assert feed_range(before, 4) == (3, 3)


def test_without_a_mark_the_feed_does_not_answer():
    assert feed_range([_commit(0, "MERGE", 3)], None) is None


def test_a_restore_in_the_range_leaves_the_answer_to_the_table():
    commits = [
        _commit(0, "CREATE TABLE AS SELECT", 3),
        _commit(1, "MERGE", 4),
        Commit(2, NOW, "RESTORE", {"version": "0"}, None),
        _commit(3, "MERGE", 5),
    ]
    assert feed_range(commits, 3) is None


@pytest.fixture
def history(spark):
    spark.sql(f"create schema if not exists {SCHEMA}")
    name = f"{SCHEMA}.versions"
    spark.sql(f"drop table if exists {name}")
    yield name
    spark.conf.unset(USER_METADATA)
    spark.sql(f"drop table if exists {name}")


def _marked(spark, mark: int, statement: str) -> None:
    run_with_commit_metadata(spark, {PROGRESS_KEY: mark}, statement)


def _merge(spark, table: str, mark: int, rows: str) -> None:
    _marked(
        spark,
        mark,
        f"merge into {table} t using (select * from values {rows} as s(id, version_id, is_current,"
        " amount)) s on t.id = s.id and t.version_id = s.version_id"
        " when matched then update set * when not matched then insert *",
    )


def test_the_feed_returns_each_version_written_after_the_mark_in_its_state_now(spark, history):
    _marked(
        spark,
        1,
        f"create table {history} (id int, version_id string, is_current boolean, amount int)"
        " using delta partitioned by (is_current)"
        " tblproperties ('delta.enableChangeDataFeed' = 'true')",
    )
    _merge(spark, history, 1, "(1, 'a', true, 10), (2, 'b', true, 20)")
    # Batch 2 closes 1's version and opens another; batch 3 closes that one too.
    _merge(spark, history, 2, "(1, 'a', false, 10), (1, 'c', true, 11), (3, 'd', true, 30)")
    _merge(spark, history, 3, "(1, 'c', false, 11), (1, 'e', true, 12)")
    frame = spark.table(history)
    assert table_name(frame) == f"spark_catalog.{history}"
    assert table_name(frame.where("is_current")) is None

    found = versions_since(spark, table_name(frame), ["id"], 1)
    assert sorted(tuple(row) for row in found.collect()) == [
        (1, "a", False, 10),
        (1, "c", False, 11),
        (1, "e", True, 12),
        (3, "d", True, 30),
    ]
    assert versions_since(spark, history, ["id"], 3).count() == 0


def test_a_history_without_the_feed_is_read_as_a_table(spark, history):
    _marked(spark, 1, f"create table {history} (id int, version_id string) using delta")
    _marked(spark, 2, f"insert into {history} values (1, 'a')")
    assert versions_since(spark, history, ["id"], 1) is None


def _macro_range(commits: list[Commit], through: int | None, feed: str = "true"):
    """What the run summary's macro answers for the same commits: (first, last), False (nothing
    since the point) or None (the feed cannot answer)."""

    def run_query(sql: str) -> SimpleNamespace:
        if sql.startswith("show tblproperties"):
            return SimpleNamespace(rows=[("delta.enableChangeDataFeed", feed)])
        assert sql == "describe history h"
        newest_first = sorted(commits, key=lambda commit: -commit.version)
        return SimpleNamespace(rows=[commit._asdict() for commit in newest_first])

    adapter = SimpleNamespace(
        get_columns_in_relation=lambda relation: [SimpleNamespace(name="id")],
        quote=lambda name: f"`{name}`",
    )
    extra = {
        "run_query": run_query,
        "fromjson": lambda text, default=None: json.loads(text),
        "execute": True,
        "adapter": adapter,
        "run_started_at": datetime.now(UTC),
    }
    query = Macros(FEED_MACRO, extra=extra).change_events_history_feed("h", through, ["id"])
    if query is None:
        return None
    if "where false" in query:
        return False
    found = re.search(r"table_changes\('h', (\d+), (\d+)\)", query)
    return int(found[1]), int(found[2])


CASES = {
    "merges": [
        _commit(0, "CREATE OR REPLACE TABLE AS SELECT", 3),
        _commit(1, "MERGE", 4),
        _commit(2, "MERGE", 6),
        _commit(3, "OPTIMIZE"),
        _commit(4, "MERGE", 7),
    ],
    "a property change": [
        _commit(0, "CREATE TABLE AS SELECT", 3),
        _commit(1, "SET TBLPROPERTIES", 3),
        _commit(2, "MERGE", 4),
        _commit(3, "MERGE", 6),
    ],
    "a restore": [
        _commit(0, "CREATE TABLE AS SELECT", 3),
        _commit(1, "MERGE", 4),
        _commit(2, "MERGE", 5),
        Commit(3, NOW, "RESTORE", {"version": "1"}, None),
        _commit(4, "MERGE", 5),
    ],
    "a commit as old as the file retention": [
        _commit(0, "CREATE TABLE AS SELECT", 3, days_ago=9),
        _commit(1, "MERGE", 4, days_ago=8),
        _commit(2, "MERGE", 5, days_ago=7),
        _commit(3, "MERGE", 6, days_ago=2),
    ],
    "a full refresh": [
        _commit(0, "CREATE TABLE AS SELECT", 3),
        _commit(1, "MERGE", 4),
        _commit(2, "CREATE OR REPLACE TABLE AS SELECT", 6),
    ],
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("through", [None, 2, 3, 4, 5, 6, 7])
def test_the_run_summary_macro_reads_the_range_the_current_model_reads(case, through):
    oldest = oldest_readable({}, datetime.now(UTC).replace(tzinfo=None))
    assert _macro_range(CASES[case], through) == feed_range(CASES[case], through, oldest)


def test_a_range_whose_feed_files_vacuum_may_have_removed_is_read_from_the_history():
    commits = CASES["a commit as old as the file retention"]
    # Delta keeps removed files 7 days unless told otherwise; an hour's margin before that.
    oldest = oldest_readable({}, NOW)
    assert feed_range(commits, 3, oldest) is None  # version 2: 7 days old
    assert feed_range(commits, 5, oldest) == (3, 3)
    longer = oldest_readable({RETENTION_PROPERTY: "interval 2 weeks"}, NOW)
    assert feed_range(commits, 3, longer) == (1, 3)
    assert retention("interval 168 hours") == timedelta(days=7)
    assert retention("7 days") == timedelta(0)  # not Delta's form: every range too old


def test_the_macro_reads_the_history_itself_when_it_keeps_no_feed():
    assert _macro_range(CASES["merges"], 4, feed="false") is None
