"""A snapshot run with nothing to change merges nothing: a timestamp-strategy run whose source
holds exactly the open rows' (key, updated_at) pairs is found by digest before any join
('unchanged'); any other run joins the source with the open rows and, finding no changed key,
computes no change rows ('nothing found'), whatever the strategy. Every day is checked on the
table's rows (expected rows written out here), on the table's versions and on the path the run
took (the SQL statements dbt ran, seen through a dbt callback)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from support import PROJECT_DIR, dbt_invoker, module_schema

from spark_cdc_dev.project_copies import snapshot_variant

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

SOURCES_YML = """
version: 2
sources:
  - name: unchanged
    schema: unchanged_src
    tables:
      - name: invalidate
      - name: new_record
      - name: composite
      - name: check_all
      - name: turned_off
"""

SNAPSHOTS_YML = """
snapshots:
  - name: un_invalidate
    relation: source('unchanged', 'invalidate')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: invalidate}
  - name: un_new_record
    relation: source('unchanged', 'new_record')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: new_record}
  - name: un_composite
    relation: source('unchanged', 'composite')
    config:
      unique_key: [region, id]
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: invalidate
  - name: un_check_all
    relation: source('unchanged', 'check_all')
    config: {unique_key: id, strategy: check, check_cols: all}
  - name: un_turned_off
    relation: source('unchanged', 'turned_off')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      snapshot_compare_digests: false
"""

T0, T1, T2, T3 = (dt.datetime(2026, 1, day, 8, 0) for day in (1, 2, 3, 4))
PEOPLE = "id int, name string, updated_at timestamp"
SKIPPED = "select 'insert' as dbt_change_type where false"
CHANGED_KEYS = re.compile(r"cache table \S+__dbt_keys_")
CHANGE_ROWS = re.compile(r"cache table \S+__dbt_changes_")


@pytest.fixture(scope="module")
def dbt(spark, tmp_path_factory):
    spark.sql("create schema if not exists unchanged_src")
    files = {"models/unchanged_sources.yml": SOURCES_YML, "snapshots/unchanged.yml": SNAPSHOTS_YML}
    base = tmp_path_factory.mktemp("unchanged")
    return dbt_invoker(snapshot_variant(base / "fixed", "unchanged", files, False, PROJECT_DIR))


def _source(spark, table: str, columns: str, rows: list[tuple]) -> None:
    frame = spark.createDataFrame(rows, columns)
    frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true").saveAsTable(
        f"unchanged_src.{table}"
    )


def _snapshot(dbt, name: str) -> str:
    """Run the snapshot; which path it took: 'unchanged' (the digest: no join), 'nothing found'
    (the changed keys' join found none: no change rows), 'change rows' (or 'build', day 1)."""
    statements: list[str] = []

    def collect(event) -> None:
        if event.info.name == "SQLQuery":
            statements.append(event.data.sql)

    dbt("snapshot", "--select", name, callbacks=[collect])
    text = "\n".join(statements)
    if SKIPPED in text:
        assert not CHANGE_ROWS.search(text) and "merge into" not in text
        return "nothing found" if CHANGED_KEYS.search(text) else "unchanged"
    return "change rows" if CHANGE_ROWS.search(text) else "build"


def _version(spark, name: str) -> int:
    return spark.sql(f"describe history {MODULE_SCHEMA}_unchanged.{name} limit 1").first()[0]


def _rows(spark, name: str, *columns: str) -> list[tuple]:
    table = spark.table(f"{MODULE_SCHEMA}_unchanged.{name}")
    return sorted(tuple(row) for row in table.select(*columns).collect())


OPEN = ("id", "name", "updated_at", "dbt_valid_to")


def test_an_unchanged_source_takes_no_change_rows_and_every_change_still_counts(spark, dbt):
    name = "un_invalidate"
    day1 = [(1, "a", T0), (2, "b", T0), (3, "c", T0)]
    _source(spark, "invalidate", PEOPLE, day1)
    assert _snapshot(dbt, name) == "build"
    built = _version(spark, name)
    first = _rows(spark, name, *OPEN)
    assert first == [(1, "a", T0, None), (2, "b", T0, None), (3, "c", T0, None)]

    assert _snapshot(dbt, name) == "unchanged"
    assert _version(spark, name) == built
    assert _rows(spark, name, *OPEN) == first

    # Same row count, one updated_at newer: not skipped, the new version is taken.
    _source(spark, "invalidate", PEOPLE, [(1, "a2", T1), (2, "b", T0), (3, "c", T0)])
    assert _snapshot(dbt, name) == "change rows"
    rows = _rows(spark, name, *OPEN)
    assert (1, "a", T0, T1) in rows and (1, "a2", T1, None) in rows
    assert len(rows) == 4

    # Same row count, one key gone and another new: the delete and the insert are taken.
    _source(spark, "invalidate", PEOPLE, [(1, "a2", T1), (2, "b", T0), (4, "d", T2)])
    assert _snapshot(dbt, name) == "change rows"
    rows = _rows(spark, name, *OPEN)
    assert (4, "d", T2, None) in rows
    closed_3 = [row for row in rows if row[0] == 3]
    assert len(closed_3) == 1 and closed_3[0][3] is not None
    changed = _rows(spark, name, *OPEN)

    # An updated_at moved back changes nothing (dbt's row_changed): the digests differ, the join
    # finds no changed key.
    _source(spark, "invalidate", PEOPLE, [(1, "a2", T1), (2, "b-old", T0 - T1 + T0), (4, "d", T2)])
    before = _version(spark, name)
    for _ in range(2):
        assert _snapshot(dbt, name) == "nothing found"
        assert _version(spark, name) == before
        assert _rows(spark, name, *OPEN) == changed

    # The source as the open rows have it again: unchanged.
    _source(spark, "invalidate", PEOPLE, [(1, "a2", T1), (2, "b", T0), (4, "d", T2)])
    assert _snapshot(dbt, name) == "unchanged"
    assert _version(spark, name) == before
    assert _rows(spark, name, *OPEN) == changed


def test_open_deletion_rows_of_new_record_do_not_stop_the_skip(spark, dbt):
    name = "un_new_record"
    _source(spark, "new_record", PEOPLE, [(1, "a", T0), (2, "b", T0), (3, "c", T0)])
    assert _snapshot(dbt, name) == "build"
    _source(spark, "new_record", PEOPLE, [(1, "a", T0), (2, "b", T0)])
    assert _snapshot(dbt, name) == "change rows"
    deleted = _rows(spark, name, "id", "name", "dbt_is_deleted", "dbt_valid_to")
    assert [row for row in deleted if row[0] == 3 and row[3] is None] == [(3, "c", "True", None)]
    version = _version(spark, name)

    assert _snapshot(dbt, name) == "unchanged"
    assert _version(spark, name) == version
    assert _rows(spark, name, "id", "name", "dbt_is_deleted", "dbt_valid_to") == deleted

    # The deleted key comes back: its deletion row is closed, a new version opens.
    _source(spark, "new_record", PEOPLE, [(1, "a", T0), (2, "b", T0), (3, "c2", T3)])
    assert _snapshot(dbt, name) == "change rows"
    rows = _rows(spark, name, "id", "name", "dbt_is_deleted", "dbt_valid_to")
    assert [row for row in rows if row[0] == 3 and row[3] is None] == [(3, "c2", "False", None)]


def test_a_composite_key_is_skipped_when_unchanged(spark, dbt):
    name = "un_composite"
    columns = "region string, id int, name string, updated_at timestamp"
    rows = [("eu", 1, "a", T0), ("us", 1, "b", T0), ("eu", 2, "c", T0)]
    _source(spark, "composite", columns, rows)
    assert _snapshot(dbt, name) == "build"
    built = _version(spark, name)
    assert _snapshot(dbt, name) == "unchanged"
    assert _version(spark, name) == built
    # The same values under swapped keys are a change.
    swapped = [("eu", 1, "a", T0), ("us", 2, "b", T0), ("eu", 2, "c", T0)]
    _source(spark, "composite", columns, swapped)
    assert _snapshot(dbt, name) == "change rows"
    found = _rows(spark, name, "region", "id", "dbt_valid_to")
    open_keys = [row[:2] for row in found if row[2] is None]
    assert open_keys == [("eu", 1), ("eu", 2), ("us", 2)]


def test_the_check_strategy_and_a_snapshot_without_digests_find_nothing_by_the_join(spark, dbt):
    for table, name in (("check_all", "un_check_all"), ("turned_off", "un_turned_off")):
        _source(spark, table, PEOPLE, [(1, "a", T0), (2, "b", T0)])
        assert _snapshot(dbt, name) == "build"
        built = _rows(spark, name, *OPEN)
        version = _version(spark, name)
        assert _snapshot(dbt, name) == "nothing found"
        assert _rows(spark, name, *OPEN) == built
        assert _version(spark, name) == version
    # a changed column with the same updated_at: the check strategy takes it
    _source(spark, "check_all", PEOPLE, [(1, "a", T0), (2, "b2", T0)])
    assert _snapshot(dbt, "un_check_all") == "change rows"
    rows = _rows(spark, "un_check_all", "id", "name", "dbt_valid_to")
    assert [row for row in rows if row[2] is None] == [(1, "a", None), (2, "b2", None)]
    assert len(rows) == 3
