"""What stock dbt-spark 1.11.0 snapshots get wrong, and that the project's overrides get right.

Each scenario runs twice on the same source data: on a copy of the project without the snapshot
macro overrides (stock dbt-spark + dbt-adapters behaviour, schema `<module schema>_stock`) and on
a copy with them (`<module schema>_fixed`). The tests assert the project's behaviour; stock's is
checked to still show the bug each override fixes, and when upstream fixes one the test warns (an
override that may go), it does not fail.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import warnings
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from support import PROJECT_DIR, SqlStatements, dbt_invoker, messages, module_schema

from spark_cdc_dev.project_copies import snapshot_variant
from spark_cdc_dev.table_state import versions

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

SCENARIOS_YML = """
version: 2
sources:
  - name: scenarios
    schema: scenario_src
    tables:
      - name: new_record
      - name: composite
      - name: restore
      - name: dropped
      - name: dupes
      - name: concurrent
      - name: zones
      - name: widened
      - name: widened_dupes
      - name: renamed_meta
      - name: new_column_new_record
      - name: new_record_moves
"""

SNAPSHOTS_YML = """
snapshots:
  - name: sc_new_record
    relation: source('scenarios', 'new_record')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: new_record}
  - name: sc_composite
    relation: source('scenarios', 'composite')
    config:
      unique_key: [region, id]
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: invalidate
  - name: sc_restore
    relation: source('scenarios', 'restore')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: invalidate}
  - name: sc_dropped
    relation: source('scenarios', 'dropped')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at}
  - name: sc_dupes
    relation: source('scenarios', 'dupes')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at}
  - name: sc_concurrent
    relation: source('scenarios', 'concurrent')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at}
  - name: sc_zones
    relation: source('scenarios', 'zones')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at}
  - name: sc_widened
    relation: source('scenarios', 'widened')
    config: {unique_key: id, strategy: check, check_cols: all}
  - name: sc_widened_dupes
    relation: source('scenarios', 'widened_dupes')
    config: {unique_key: id, strategy: check, check_cols: all}
  - name: sc_renamed_meta
    relation: source('scenarios', 'renamed_meta')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at}
  - name: sc_new_column_new_record
    relation: source('scenarios', 'new_column_new_record')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: new_record}
  - name: sc_new_record_moves
    relation: source('scenarios', 'new_record_moves')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: new_record}
"""

T1, T2, T3 = "2026-01-01 08:00:00", "2026-01-02 08:00:00", "2026-01-03 08:00:00"


# The two project copies (fixed, stock), for scenarios that change a snapshot's configuration.
PROJECTS: dict[str, Path] = {}


def _scenario_project(base: Path, schema_suffix: str, stock: bool) -> Path:
    files = {"models/scenario_sources.yml": SCENARIOS_YML, "snapshots/scenarios.yml": SNAPSHOTS_YML}
    return snapshot_variant(base / schema_suffix, schema_suffix, files, stock, PROJECT_DIR)


class UpstreamFixed(UserWarning):
    """Stock dbt-spark no longer shows a bug that one of the project's overrides fixes."""


def _upstream_bug(still_there: bool, bug: str) -> None:
    """Stock still has ``bug`` (the fix's test would fail there); a warning when it no longer
    does, not a failure: the project's behaviour is what the test asserts."""
    if not still_there:
        warnings.warn(UpstreamFixed(f"stock dbt-spark no longer shows: {bug}"), stacklevel=2)


# Statements that change a table (temporary views and cached relations are the run's own).
WRITES = re.compile(
    r"\b(merge\s+into|insert\s+(into|overwrite)|alter\s+table|create\s+(or\s+replace\s+)?table"
    r"|replace\s+table|update\s+\S+\s+set|delete\s+from|optimize|vacuum)\b",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """dbt invokers for the fixed and the stock project copies."""
    spark.sql("create schema if not exists scenario_src")
    base = tmp_path_factory.mktemp("scenarios")
    PROJECTS.update(
        fixed=_scenario_project(base, "fixed", stock=False),
        stock=_scenario_project(base, "stock", stock=True),
    )
    return {which: dbt_invoker(project) for which, project in PROJECTS.items()}


def _source(spark, table: str, columns: str, rows: list[tuple]) -> None:
    def literal(value: object) -> str:
        return "null" if value is None else f"'{value}'" if isinstance(value, str) else str(value)

    values = ", ".join("(" + ", ".join(map(literal, row)) + ")" for row in rows)
    spark.sql(f"drop table if exists scenario_src.{table}")
    spark.sql(f"create table scenario_src.{table} ({columns}) using delta")
    spark.sql(f"insert into scenario_src.{table} values {values}")


def _snapshot(runs, which: str, name: str, expect_success: bool = True):
    return runs[which]("snapshot", "--select", name, expect_success=expect_success)


def _rows(spark, which: str, name: str) -> list[dict]:
    return [r.asDict() for r in spark.table(f"{MODULE_SCHEMA}_{which}.{name}").collect()]


def _failure(result) -> str:
    return messages(result) + str(result.exception or "")


PEOPLE = "id int, name string, updated_at timestamp"


def test_new_record_deletion_rows_keep_the_deleted_values(spark, runs):
    _source(spark, "new_record", PEOPLE, [(1, "Ann", T1), (2, "Ben", T1)])
    for which in runs:
        _snapshot(runs, which, "sc_new_record")
    _source(spark, "new_record", PEOPLE, [(1, "Ann", T1)])
    for which in runs:
        _snapshot(runs, which, "sc_new_record")

    def deletion_rows(which):
        rows = _rows(spark, which, "sc_new_record")
        return [r for r in rows if r["dbt_is_deleted"] == "True"]

    (fixed,) = deletion_rows("fixed")
    (stock,) = deletion_rows("stock")
    assert fixed["id"] == 2
    assert fixed["name"] == "Ben" and fixed["updated_at"] == dt.datetime(2026, 1, 1, 8)
    assert fixed["dbt_is_deleted"] == stock["dbt_is_deleted"] == "True"  # dbt's own flag
    # dbt-adapters#1401: every source column is NULL on the deletion row, the key included.
    _upstream_bug(stock["id"] is None and stock["name"] is None, "dbt-adapters#1401")


def test_a_snapshot_moves_between_stock_dbt_and_the_package(spark, runs):
    """One new_record snapshot table built by stock dbt-spark, continued by the package (a
    delete), by stock again (the key back), and by the package (another delete): every run
    succeeds, dbt_is_deleted stays dbt's string, and the rows are dbt's contract's. Stock's
    MERGE inserts `*`, which Delta refuses while the table has columns stock's staging lacks
    (the package's metadata columns) unless schema auto-merge is on (docs/snapshots.md)."""
    name = "sc_new_record_moves"
    tables = {which: f"{MODULE_SCHEMA}_{which}.{name}" for which in runs}
    auto_merge = "spark.databricks.delta.schema.autoMerge.enabled"

    def run(which, rows):
        _source(spark, "new_record_moves", PEOPLE, rows)
        other = tables["stock" if which == "fixed" else "fixed"]
        spark.sql(f"create schema if not exists {MODULE_SCHEMA}_{which}")
        if spark.catalog.tableExists(other):  # the table as the other side left it
            spark.sql(
                f"create or replace table {tables[which]} using delta as select * from {other}"
            )
        spark.conf.set(auto_merge, str(which == "stock").lower())
        try:
            _snapshot(runs, which, name)
        finally:
            spark.conf.unset(auto_merge)
        flag = dict(spark.table(tables[which]).dtypes)["dbt_is_deleted"]
        assert flag == "string", (which, flag)

    run("stock", [(1, "Ann", T1), (2, "Ben", T1)])
    run("fixed", [(1, "Ann", T1)])
    run("stock", [(1, "Ann", T1), (2, "Ben B", T3)])
    run("fixed", [(2, "Ben B", T3)])
    found = sorted(
        (r["id"], r["name"], r["dbt_is_deleted"], r["dbt_valid_to"] is None)
        for r in spark.table(tables["fixed"]).collect()
    )
    assert found == [
        (1, "Ann", "False", False),
        (1, "Ann", "True", True),  # the package's deletion row keeps the deleted values
        (2, "Ben", "False", False),
        (2, "Ben", "True", False),
        (2, "Ben B", "False", True),
    ]

    # A table built by an earlier spark_cdc (a boolean flag) keeps its type and its meaning.
    flagged = spark.table(tables["fixed"]).withColumn(
        "dbt_is_deleted", F.col("dbt_is_deleted") == "True"
    )
    flagged.localCheckpoint().write.format("delta").mode("overwrite").option(
        "overwriteSchema", "true"
    ).saveAsTable(tables["fixed"])
    _source(spark, "new_record_moves", PEOPLE, [(1, "Ann", T3), (2, "Ben B", T3)])
    _snapshot(runs, "fixed", name)
    assert dict(spark.table(tables["fixed"]).dtypes)["dbt_is_deleted"] == "boolean"
    ann = sorted(
        (r["dbt_is_deleted"], r["dbt_valid_to"] is None)
        for r in spark.table(tables["fixed"]).where("id = 1").collect()
    )
    assert ann == [(False, False), (False, True), (True, False)]  # back: the deletion closed


def test_composite_key_does_not_leak_helper_columns(spark, runs):
    columns = "region string, id int, name string, updated_at timestamp"
    states = [
        [("EU", 1, "Ann", T1), ("US", 1, "Ben", T1)],
        [("EU", 1, "Ann B", T2), ("US", 1, "Ben", T1)],
        [("EU", 1, "Ann C", T3)],
    ]
    outcomes: dict[str, list[bool]] = {"fixed": [], "stock": []}
    for state in states:
        _source(spark, "composite", columns, state)
        for which in runs:
            result = _snapshot(runs, which, "sc_composite", expect_success=False)
            outcomes[which].append(result.success)
    assert outcomes["fixed"] == [True, True, True]
    fixed_columns = spark.table(f"{MODULE_SCHEMA}_fixed.sc_composite").columns
    assert not [c for c in fixed_columns if c.startswith("dbt_unique_key")]
    fixed = _rows(spark, "fixed", "sc_composite")
    assert sorted((r["region"], r["name"]) for r in fixed if r["dbt_valid_to"] is None) == [
        ("EU", "Ann C")
    ]
    # dbt-adapters#2101: the second run adds the helper columns to the target and fails.
    stock_columns = spark.table(f"{MODULE_SCHEMA}_stock.sc_composite").columns
    _upstream_bug("dbt_unique_key_1" in stock_columns, "dbt-adapters#2101")
    _upstream_bug(outcomes["stock"][0] and not any(outcomes["stock"][1:]), "dbt-adapters#2101")


def test_restored_key_never_overlaps_its_deleted_version(spark, runs):
    _source(spark, "restore", PEOPLE, [(1, "Ann", T1), (2, "Ben", T1)])
    for which in runs:
        _snapshot(runs, which, "sc_restore")
    _source(spark, "restore", PEOPLE, [(1, "Ann", T1)])
    for which in runs:
        _snapshot(runs, which, "sc_restore")
    # Restored with a business time later than its first version but before the deletion run.
    _source(spark, "restore", PEOPLE, [(1, "Ann", T1), (2, "Ben", T2)])
    for which in runs:
        _snapshot(runs, which, "sc_restore")

    def versions(which):
        rows = [r for r in _rows(spark, which, "sc_restore") if r["id"] == 2]
        return sorted(rows, key=lambda r: r["dbt_valid_from"])

    closed, restored = versions("fixed")
    assert restored["dbt_valid_to"] is None
    assert restored["dbt_valid_from"] >= closed["dbt_valid_to"]
    assert restored["dbt_updated_at"] == dt.datetime(2026, 1, 2, 8)
    stock_first, stock_restored = versions("stock")
    _upstream_bug(stock_restored["dbt_valid_from"] < stock_first["dbt_valid_to"], "overlap")


def test_merge_inserts_an_explicit_column_list(spark, runs):
    _source(
        spark,
        "dropped",
        "id int, name string, nickname string, updated_at timestamp",
        [(1, "Ann", "A", T1)],
    )
    for which in runs:
        _snapshot(runs, which, "sc_dropped")
    # The source stops sending `nickname`: the snapshot keeps the column, new rows have NULL.
    _source(spark, "dropped", PEOPLE, [(1, "Ann", T1), (2, "Ben", T2)])
    fixed = _snapshot(runs, "fixed", "sc_dropped", expect_success=False)
    stock = _snapshot(runs, "stock", "sc_dropped", expect_success=False)
    assert fixed.success
    rows = {r["id"]: r for r in _rows(spark, "fixed", "sc_dropped")}
    assert rows[2]["name"] == "Ben" and rows[2]["nickname"] is None
    assert rows[1]["nickname"] == "A"
    _upstream_bug(not stock.success, "`insert *` cannot fill a dropped source column")


def test_duplicate_keys_fail_before_the_merge_naming_the_keys(spark, runs):
    # The first run checks the keys inside the statement that creates the table: it fails and
    # creates nothing, naming an offending key.
    _source(spark, "dupes", PEOPLE, [(None, "Nobody", T1), (2, "Ben", T1)])
    nulls = _failure(_snapshot(runs, "fixed", "sc_dupes", expect_success=False))
    assert "NULL or duplicate unique_key values" in nulls and "(id=NULL) x1" in nulls
    assert not spark.catalog.tableExists(f"{MODULE_SCHEMA}_fixed.sc_dupes")
    _source(spark, "dupes", PEOPLE, [(1, "Ann", T1), (1, "Annie", T1), (2, "Ben", T1)])
    fixed = _snapshot(runs, "fixed", "sc_dupes", expect_success=False)
    stock = _snapshot(runs, "stock", "sc_dupes", expect_success=False)
    assert not fixed.success
    message = _failure(fixed)
    assert "duplicate unique_key values" in message and "(id=1) x2" in message
    assert not spark.catalog.tableExists(f"{MODULE_SCHEMA}_fixed.sc_dupes")
    # Stock: the first run silently stores two versions of key 1 with one dbt_scd_id.
    stock_rows = (
        [r for r in _rows(spark, "stock", "sc_dupes") if r["id"] == 1] if stock.success else []
    )
    _upstream_bug(
        len(stock_rows) == 2 and stock_rows[0]["dbt_scd_id"] == stock_rows[1]["dbt_scd_id"],
        "duplicate keys stored with one dbt_scd_id",
    )

    # On a later run (the MERGE path) the fixed snapshot refuses duplicates the same way.
    _source(spark, "dupes", PEOPLE, [(1, "Ann", T1), (2, "Ben", T1)])
    _snapshot(runs, "fixed", "sc_dupes")
    _source(spark, "dupes", PEOPLE, [(1, "Ann", T2), (1, "Annie", T2), (2, "Ben", T1)])
    again = _snapshot(runs, "fixed", "sc_dupes", expect_success=False)
    assert not again.success and "(id=1) x2" in _failure(again)
    assert len(_rows(spark, "fixed", "sc_dupes")) == 2  # nothing was written


def test_concurrent_runs_do_not_share_a_staging_view(spark, runs):
    _source(spark, "concurrent", PEOPLE, [(1, "Ann", T1)])
    for which in runs:
        _snapshot(runs, which, "sc_concurrent")
    # Another run of the same snapshot is between building its staging view and merging it.
    other_views = {
        "fixed": f"{MODULE_SCHEMA}_fixed.sc_concurrent__dbt_tmp_0123456789abcdef",
        "stock": f"{MODULE_SCHEMA}_stock.sc_concurrent__dbt_tmp",
    }
    for view in other_views.values():
        spark.sql(f"create or replace view {view} as select 1 as marker")
    _source(spark, "concurrent", PEOPLE, [(1, "Ann B", T2)])
    statements: list[str] = []

    def collect(event) -> None:
        if event.info.name == "SQLQuery":
            statements.append(" ".join(event.data.sql.split()))

    runs["fixed"]("snapshot", "--select", "sc_concurrent", callbacks=[collect])
    _snapshot(runs, "stock", "sc_concurrent")
    assert spark.catalog.tableExists(other_views["fixed"])
    leftovers = [
        t.name
        for t in spark.catalog.listTables(f"{MODULE_SCHEMA}_fixed")
        if t.name.startswith("sc_concurrent__dbt_tmp")
    ]
    assert leftovers == ["sc_concurrent__dbt_tmp_0123456789abcdef"]  # the other's view only
    # Ours is a temporary view of the run's session: it never reaches the metastore.
    staging = [s for s in statements if "create or replace" in s and "__dbt_tmp_" in s]
    assert len(staging) == 1
    assert "create or replace temporary view sc_concurrent__dbt_tmp_" in staging[0]
    _upstream_bug(
        not spark.catalog.tableExists(other_views["stock"]), "a shared staging view dropped"
    )


def test_high_end_date_does_not_shift_with_the_session_time_zone(spark, runs):
    _source(spark, "zones", PEOPLE, [(1, "Ann", T1)])
    spark.conf.set("spark.sql.session.timeZone", "Australia/Sydney")
    try:
        _snapshot(runs, "fixed", "sc_zones")
        shown = spark.sql(
            f"select cast(dbt_valid_to_high as string) as high from {MODULE_SCHEMA}_fixed.sc_zones"
        ).collect()[0]["high"]
        zulu = spark.sql(
            "select cast(cast('9999-12-31T23:59:59Z' as timestamp) as string) as high"
        ).collect()[0]["high"]
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert shown == "9999-12-31 23:59:59"
    assert zulu.startswith("+10000")  # what a Z-suffixed literal would have stored

    refused = runs["fixed"](
        "snapshot",
        "--select",
        "sc_zones",
        "--vars",
        json.dumps({"default_high_dttm": "9999-12-31T23:59:59Z"}),
        expect_success=False,
    )
    assert not refused.success and "zone-less" in _failure(refused)


def test_a_widened_source_column_keeps_history_and_values(spark, runs):
    # dbt-databricks#759: int -> bigint re-inserted every row. Day 2 widens `amount`; only the
    # row whose value changed gets a version, and a value beyond int's range is kept exactly.
    _source(spark, "widened", "id int, amount int", [(1, 10), (2, 20)])
    for which in runs:
        _snapshot(runs, which, "sc_widened")
    _source(spark, "widened", "id int, amount bigint", [(1, 10), (2, 3_000_000_000)])
    fixed = _snapshot(runs, "fixed", "sc_widened", expect_success=False)
    stock = _snapshot(runs, "stock", "sc_widened", expect_success=False)
    assert fixed.success, messages(fixed)
    _upstream_bug(not stock.success, "dbt-databricks#759: a widened column cannot be merged")
    rows = sorted(
        (r["id"], r["amount"], r["dbt_valid_to"] is None)
        for r in _rows(spark, "fixed", "sc_widened")
    )
    assert rows == [(1, 10, True), (2, 20, False), (2, 3_000_000_000, True)]
    types = dict(spark.table(f"{MODULE_SCHEMA}_fixed.sc_widened").dtypes)
    assert types["amount"] == "bigint"


def test_a_refused_run_that_would_widen_a_column_leaves_the_table_at_its_version(spark, runs):
    # The source widens `amount` and repeats a key: the key check refuses the run, and the type
    # widening (a protocol change older readers cannot read) is not made either.
    _source(spark, "widened_dupes", "id int, amount int", [(1, 10), (2, 20)])
    _snapshot(runs, "fixed", "sc_widened_dupes")
    table = f"{MODULE_SCHEMA}_fixed.sc_widened_dupes"
    before = versions(spark, [table])
    _source(spark, "widened_dupes", "id int, amount bigint", [(1, 10), (2, 3_000_000_000), (2, 21)])
    statements = SqlStatements()
    refused = runs["fixed"](
        "snapshot", "--select", "sc_widened_dupes", expect_success=False, callbacks=[statements]
    )
    assert not refused.success and "sc_widened_dupes" in _failure(refused)
    # The run read the source (its key check refused it) and stopped before any statement that
    # writes to the snapshot table (step 5 of macros/snapshots/snapshot_flow.sql comes after).
    assert any(
        "scenario_src" in statement and "widened_dupes" in statement for statement in statements
    )
    writes = [
        statement
        for statement in statements
        if "sc_widened_dupes" in statement and WRITES.search(statement)
    ]
    assert writes == []
    assert versions(spark, [table]) == before
    assert dict(spark.table(table).dtypes)["amount"] == "int"
    properties = {row.key for row in spark.sql(f"show tblproperties {table}").collect()}
    assert "delta.enableTypeWidening" not in properties


def test_renamed_meta_columns_on_an_existing_table_are_refused_before_any_write(spark, runs):
    # dbt-adapters#1375: changing snapshot_meta_column_names on an existing snapshot table. dbt's
    # own check refuses it, naming the missing columns, before the project's macros run.
    _source(spark, "renamed_meta", PEOPLE, [(1, "Ann", T1)])
    _snapshot(runs, "fixed", "sc_renamed_meta")
    snapshots = PROJECTS["fixed"] / "snapshots" / "scenarios.yml"
    original = snapshots.read_text()
    renamed = original.replace(
        "relation: source('scenarios', 'renamed_meta')\n"
        "    config: {unique_key: id, strategy: timestamp, updated_at: updated_at}",
        "relation: source('scenarios', 'renamed_meta')\n"
        "    config:\n      unique_key: id\n      strategy: timestamp\n"
        "      updated_at: updated_at\n"
        "      snapshot_meta_column_names:\n"
        "        {dbt_valid_to: valid_until, dbt_valid_from: valid_since}",
    )
    assert renamed != original
    snapshots.write_text(renamed)
    try:
        _source(spark, "renamed_meta", PEOPLE, [(1, "Annie", T2)])
        before = spark.sql(f"describe history {MODULE_SCHEMA}_fixed.sc_renamed_meta").count()
        failed = _snapshot(runs, "fixed", "sc_renamed_meta", expect_success=False)
        assert not failed.success
        text = _failure(failed)
        assert "missing configured columns" in text and "valid_until" in text
        assert (
            spark.sql(f"describe history {MODULE_SCHEMA}_fixed.sc_renamed_meta").count() == before
        )
        assert [r["name"] for r in _rows(spark, "fixed", "sc_renamed_meta")] == ["Ann"]
    finally:
        snapshots.write_text(original)


def test_a_new_source_column_with_new_record_deletes(spark, runs):
    # dbt-adapters#1656/#1702 (the UNION of new_record deletions breaks on a new column): a column
    # added to the source on a day that also deletes a key. The column is added to the table; the
    # update gets its value, the deletion row keeps the deleted row's values (the new column
    # null: the row never had one).
    _source(spark, "new_column_new_record", PEOPLE, [(1, "Ann", T1), (2, "Ben", T1)])
    for which in runs:
        _snapshot(runs, which, "sc_new_column_new_record")
    _source(
        spark,
        "new_column_new_record",
        "id int, name string, updated_at timestamp, email string",
        [(1, "Annie", T2, "annie@example.com")],
    )
    fixed = _snapshot(runs, "fixed", "sc_new_column_new_record", expect_success=False)
    stock = _snapshot(runs, "stock", "sc_new_column_new_record", expect_success=False)
    assert fixed.success, _failure(fixed)
    rows = sorted(
        (r["id"], r["name"], r["email"], r["dbt_is_deleted"], r["dbt_valid_to"] is None)
        for r in _rows(spark, "fixed", "sc_new_column_new_record")
    )
    assert rows == [
        (1, "Ann", None, "False", False),
        (1, "Annie", "annie@example.com", "False", True),
        (2, "Ben", None, "False", False),
        (2, "Ben", None, "True", True),
    ]
    # Stock takes the new column too (dbt-spark 1.11 does not break here), but its deletion row
    # loses the deleted key (dbt-adapters#1401, as above).
    stored = _rows(spark, "stock", "sc_new_column_new_record") if stock.success else []
    deletions = [r for r in stored if r["dbt_is_deleted"] == "True"]
    _upstream_bug([(r["id"], r["name"]) for r in deletions] == [(None, None)], "dbt-adapters#1401")
