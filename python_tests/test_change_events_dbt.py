"""Change-event resolution end to end: generated batches landed over three dbt builds, then a
full refresh that must give the same tables."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from support import SqlStatements, module_schema, table_digests

from spark_cdc.change_events.history_feed import FEED_PROPERTY, feed_enabled
from spark_cdc.change_events.landing import land_batch_files, land_initial_rows
from spark_cdc.generators.change_events import SCHEMA, StreamSpec, write_stream
from spark_cdc_dev.main_job import change_event_tables

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

SELECT = ["--select", "stg_change_events__customers+", "stg_change_events__customers_initial+"]
FEED = "landing.customers_change_events"
HISTORY = f"{MODULE_SCHEMA}.change_events__customers_history"
# What a run killed after its ledger commit did not build.
HISTORY_MODELS = "change_events__customers_history+"
CURRENT = f"{MODULE_SCHEMA}.change_events__customers_current"


def _timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _current(spark) -> set[tuple]:
    rows = spark.table(CURRENT).drop("process_id").collect()
    return {tuple(row) for row in rows}


def _expected(folder: Path) -> set[tuple]:
    rows = [json.loads(line) for line in (folder / "expected_state.jsonl").open()]
    return {
        (
            r["id"],
            r["name"],
            r["amount"],
            _timestamp(r["created_at"]),
            _timestamp(r["updated_at"]),
            r["last_change_type"],
        )
        for r in rows
    }


def _table_versions(spark) -> dict[str, int]:
    """Each table of the source: its latest Delta version."""
    tables = [
        row.tableName
        for row in spark.sql(f"show tables in {MODULE_SCHEMA}").collect()
        if row.tableName.startswith(("change_events__customers", "int_change_events__customers"))
        and not row.isTemporary
    ]
    found = {}
    for table in tables:
        if (
            spark.sql(f"describe table extended {MODULE_SCHEMA}.{table}")
            .where("col_name = 'Type' and data_type = 'VIEW'")
            .isEmpty()
        ):
            last = spark.sql(f"describe history {MODULE_SCHEMA}.{table} limit 1").first()
            found[table] = last.version
    return found


@pytest.fixture(scope="module")
def stream(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("change_events")
    spec = StreamSpec(initial_rows=300, events=3_000, batches=6, malformed_rate=0.02, seed=11)
    return folder, write_stream(spec, folder, show_progress=False)


def test_three_incremental_builds_then_a_full_refresh(spark, dbt, stream):
    folder, manifest = stream
    # Start from nothing: another test file of this process may have built these tables.
    for table in change_event_tables(MODULE_SCHEMA):
        spark.sql(f"drop table if exists {table}")
    land_initial_rows(
        spark, "landing.customers_initial_rows", folder / "initial_state.jsonl", SCHEMA
    )
    files = sorted((folder / "batches").glob("batch-*.jsonl"))
    # The runs before the last two build the models only; the data tests run on the tables the
    # runs leave (the two builds below), which hold every row the earlier runs wrote.
    statements = SqlStatements()
    for delivery in (files[:2], files[2:4]):
        land_batch_files(spark, FEED, delivery)
        dbt("run", *SELECT, callbacks=[statements])
        if delivery == files[:2]:
            # A history built before it kept a Change Data Feed: the next run turns the feed on
            # and reads the history itself (current, run summary); the runs after it, the feed.
            assert feed_enabled(spark, HISTORY)
            spark.sql(f"alter table {HISTORY} set tblproperties ('{FEED_PROPERTY}' = 'false')")
    # The incremental runs add each Python model's result from a temporary view of its session
    # (the sparkcdc adapter's materialization), never through a `__dbt_tmp` table.
    text = "\n".join(statements)
    for model in ("int_change_events__customers_ledger", "change_events__customers_history"):
        assert f"from {model}__dbt_tmp" in text or f"using {model}__dbt_tmp" in text
        assert f"drop view if exists {model}__dbt_tmp" in text
    assert f"{MODULE_SCHEMA}.int_change_events__customers_ledger__dbt_tmp" not in text
    # The third run is killed after its ledger commit, before its history: the next run writes
    # the history of its batch too. The summary must count each run as if uninterrupted.
    land_batch_files(spark, FEED, files[4:5])
    dbt("run", "--select", "stg_change_events__customers+", "--exclude", HISTORY_MODELS)
    # The fourth is killed after its history commit, before the current table: the next run's
    # current table reads the two history commits since its mark from the history's feed.
    land_batch_files(spark, FEED, files[5:])
    fed = SqlStatements()
    dbt("run", *SELECT, "--exclude", CURRENT.split(".")[1], callbacks=[fed])
    # The run summary counted the two runs' versions from the history's feed.
    assert "from table_changes(" in "\n".join(fed)
    dbt("run", *SELECT)
    assert _current(spark) == _expected(folder)
    assert feed_enabled(spark, HISTORY)

    summary = spark.table(f"{MODULE_SCHEMA}.change_events__customers_run_summary").collect()
    assert len(summary) == 4 and sum(r.batches for r in summary) == len(files)
    assert sum(r.events_in for r in summary) == manifest["events"]
    assert sum(r.applied for r in summary) == manifest["applied"]
    assert sum(r.duplicates for r in summary) == manifest["duplicates"]
    assert sum(r.quarantined for r in summary) == manifest["quarantined"]
    # Every history version is counted once, for the run that took in its event (the killed
    # one included: it took in events, so it wrote versions).
    assert sum(r.versions_written for r in summary) == spark.table(HISTORY).count()
    assert all(r.versions_written > 0 for r in summary)
    quarantine = spark.table(f"{MODULE_SCHEMA}.change_events__customers_quarantine")
    reasons = {r[0]: r[1] for r in quarantine.groupBy("quarantine_reason").count().collect()}
    assert reasons == manifest["quarantine_reasons"]

    every_table = table_digests(spark, MODULE_SCHEMA, "change_events__", "int_change_events__")
    versions = _table_versions(spark)
    dbt("build", *SELECT)  # no new batch: nothing changes
    # and nothing is written: no table has a new Delta commit
    after = _table_versions(spark)
    changed = {t: v for t, v in after.items() if versions.get(t) != v}
    assert not changed, [
        (
            t,
            [
                tuple(r)
                for r in spark.sql(f"describe history {MODULE_SCHEMA}.{t} limit 2")
                .select("version", "operation", "operationParameters")
                .collect()
            ],
        )
        for t in changed
    ]
    assert _current(spark) == _expected(folder)
    # Every table of the source (ledger, history, current, quarantine, run summary) as it was,
    # process ids included.
    assert (
        table_digests(spark, MODULE_SCHEMA, "change_events__", "int_change_events__") == every_table
    )
    assert spark.table(f"{MODULE_SCHEMA}.change_events__customers_run_summary").count() == 4

    history = Counter(map(tuple, spark.table(HISTORY).drop("process_id").collect()))
    dbt("build", *SELECT, "--full-refresh")
    assert _current(spark) == _expected(folder)
    assert Counter(map(tuple, spark.table(HISTORY).drop("process_id").collect())) == history


def test_delta_statistics_cover_what_runs_filter_on(spark, stream):
    """The ledger and the history, as the builds above created them, keep file statistics on
    the columns their runs filter on only."""

    def stats_columns(table: str) -> str | None:
        properties = spark.sql(f"show tblproperties {MODULE_SCHEMA}.{table}").collect()
        return {r.key: r.value for r in properties}.get("delta.dataSkippingStatsColumns")

    assert stats_columns("int_change_events__customers_ledger") == (
        "_batch_id,event_ts,status,process_id"
    )
    assert stats_columns("change_events__customers_history") == "valid_from,valid_to,process_id"


def test_source_freshness_is_the_newest_landing(spark, dbt, stream):
    """`dbt source freshness` of the feed: the landing time of its newest batch."""
    newest = spark.table(FEED).selectExpr("max(_ingested_at)").first()[0]
    result = dbt("source", "freshness", "--select", "source:change_events__customers.events")
    (entry,) = [r for r in result.result.results if r.node.resource_type == "source"]
    assert entry.status == "pass"
    assert entry.max_loaded_at.replace(tzinfo=None) == newest


def test_a_new_image_column_reaches_history_and_current(spark, dbt, stream, tmp_path):
    """evolve_columns is on for the customer source: a column the target does not declare
    becomes a text column of both tables, null in every other row."""
    key = spark.table(CURRENT).agg({"id": "min"}).first()[0]
    event = {
        "change_type": "update",
        "event_ts": "2027-01-01 00:00:00",
        "event_seq": None,
        "column_names": ["id", "name", "amount", "tier"],
        "column_values": [str(key), "renamed", "1", "gold"],
        "old_key_names": ["id"],
        "old_key_values": [str(key)],
    }
    path = tmp_path / "batch-with-tier.jsonl"
    path.write_text(json.dumps(event) + "\n", encoding="utf-8")
    land_batch_files(spark, FEED, [path])
    dbt("build", *SELECT)
    current = spark.table(CURRENT)
    assert dict(current.dtypes)["tier"] == "string" and "_is_deleted" not in current.columns
    assert [
        tuple(r) for r in current.where("tier is not null").select("id", "amount", "tier").collect()
    ] == [(key, 1, "gold")]
    assert spark.table(HISTORY).where("tier is not null").count() == 1


def _event_lines(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    return path


def _customer_event(kind: str, at: datetime, seq: int, key: int, name: str) -> dict:
    """A feed event of customer ``key`` (an insert, or an update of that key)."""
    return {
        "change_type": kind,
        "event_ts": at.isoformat(sep=" "),
        "event_seq": seq,
        "column_names": ["id", "name", "amount"],
        "column_values": [str(key), name, "1"],
        "old_key_names": None if kind == "insert" else ["id"],
        "old_key_values": None if kind == "insert" else [str(key)],
    }


def _scoped_passes(spark) -> list[tuple[str, str]]:
    passes = spark.table(f"{MODULE_SCHEMA}.spark_cdc_scoped_test_passes")
    return sorted(tuple(row) for row in passes.select("test_id", "tested_relation").collect())


def test_the_source_tests_read_what_changed_since_they_last_passed(spark, dbt, tmp_path):
    """The ledger's and the history's data tests read the rows written since they last passed
    (the ledger's new batches, the versions ending at or after the run's earliest new event); a
    test that fails on rows a landed batch brought keeps reading them, through later runs whose
    bounds lie above them, until they are fixed; a full audit reads every row. The passes are
    kept one row per test and tested table."""
    for table in change_event_tables(MODULE_SCHEMA):
        spark.sql(f"drop table if exists {table}")
    spark.sql(f"drop table if exists {MODULE_SCHEMA}.spark_cdc_scoped_test_passes")
    spec = StreamSpec(
        initial_rows=40,
        events=600,
        batches=3,
        duplicate_rate=0.0,
        malformed_rate=0.0,
        late_batch_rate=0.0,
        seed=5,
    )
    write_stream(spec, tmp_path, show_progress=False)
    land_initial_rows(
        spark, "landing.customers_initial_rows", tmp_path / "initial_state.jsonl", SCHEMA
    )
    files = sorted((tmp_path / "batches").glob("batch-*.jsonl"))
    land_batch_files(spark, FEED, files[:2])
    dbt("build", *SELECT)
    land_batch_files(spark, FEED, files[2:])
    dbt("run", *SELECT)

    scoped_tests = ("int_change_events__customers_ledger", "change_events__customers_history")
    statements = SqlStatements()
    scoped = dbt("test", "--select", *scoped_tests, callbacks=[statements])
    tests = [r for r in scoped.result.results if r.node.resource_type == "test"]
    # with the history's test that no key's order fell back to the fingerprint
    assert len(tests) == 9 and {r.status for r in tests} == {"pass"}
    # The bounds: the third batch, and its earliest event (every event of it is applied).
    events = [json.loads(line) for line in files[2].open()]
    earliest = min(event["event_ts"] for event in events)
    text = "\n".join(statements)
    assert "`_batch_id` >= 2)" in text and f"`valid_to` >= '{earliest}')" in text
    recorded = _scoped_passes(spark)
    scoped_ids = {
        t.node.unique_id
        for t in tests
        if "__spark_cdc_changed_rows__" in (t.node.config.where or "")
    }
    assert len(recorded) == len(set(recorded)) and {r[0] for r in recorded} == scoped_ids, recorded

    # A landed batch brings a defect: a new key's two updates at one position (an ambiguous
    # order), both closed by the key's next update within the batch.
    latest = max(_timestamp(event["event_ts"]) for event in events)
    key, second = 990_001, timedelta(seconds=1)
    tie = [
        _customer_event("insert", latest + 10 * second, 1, key, "new"),
        _customer_event("update", latest + 20 * second, 2, key, "tie-a"),
        _customer_event("update", latest + 20 * second, 2, key, "tie-b"),
        _customer_event("update", latest + 30 * second, 3, key, "settled"),
    ]
    land_batch_files(spark, FEED, [_event_lines(tmp_path / "batch-tie.jsonl", tie)])
    dbt("run", *SELECT)
    ambiguous = spark.table(HISTORY).where("is_ambiguous")
    assert {(row.id, row.valid_to) for row in ambiguous.collect()} == {
        (key, latest + 20 * second),
        (key, latest + 30 * second),
    }

    def failing() -> list[str]:
        run = dbt("test", "--select", "change_events__customers_history", expect_success=False)
        return sorted(r.node.name for r in run.result.results if r.status == "fail")

    ambiguity_test = next(
        t.node.name
        for t in tests
        if "accepted_values" in t.node.name and "ambiguous" in t.node.name
    )
    assert failing() == [ambiguity_test]
    # A later batch's run is bounded above the ambiguous versions (they end before its earliest
    # event): the failed test still reads them, by the bound of the run that wrote them.
    later = [_customer_event("insert", latest + 60 * second, 4, key + 1, "later")]
    land_batch_files(spark, FEED, [_event_lines(tmp_path / "batch-later.jsonl", later)])
    dbt("run", *SELECT)
    assert failing() == [ambiguity_test]
    spark.sql(f"update {HISTORY} set is_ambiguous = false where id = {key}")
    assert failing() == []
    # Nothing written to the history since its tests passed: they read no row.
    again = SqlStatements()
    dbt("test", "--select", "change_events__customers_history", callbacks=[again])
    assert "where false" in "\n".join(again) and ">= " not in "\n".join(again)
    # Each pass replaced the test's row: still one row per test and tested table.
    assert _scoped_passes(spark) == recorded

    audit = SqlStatements()
    dbt(
        "test",
        "--select",
        *scoped_tests,
        "--vars",
        "{spark_cdc_full_audit: true}",
        callbacks=[audit],
    )
    assert ">= " not in "\n".join(audit) and "where false" not in "\n".join(audit)
    # A role that may not write records nothing (and so fails at no run end).
    version = spark.sql(f"describe history {MODULE_SCHEMA}.spark_cdc_scoped_test_passes").first()
    dbt("test", "--select", *scoped_tests, "--vars", "{spark_cdc_record_scoped_test_passes: false}")
    unchanged = spark.sql(f"describe history {MODULE_SCHEMA}.spark_cdc_scoped_test_passes").first()
    assert unchanged.version == version.version


def test_a_tie_with_an_earlier_run_recounts_that_runs_ambiguous_versions(spark, dbt, tmp_path):
    """A later run's event at the very position (key, event_ts, event_seq) of an event an earlier
    run applied makes both versions ambiguous: the run summary recounts the earlier run too, so
    that every ambiguous version counts once, for the run that took in its event."""
    for table in change_event_tables(MODULE_SCHEMA):
        spark.sql(f"drop table if exists {table}")
    spec = StreamSpec(
        initial_rows=20,
        events=200,
        batches=1,
        duplicate_rate=0.0,
        tie_rate=0.0,
        malformed_rate=0.0,
        late_batch_rate=0.0,
        seed=8,
    )
    write_stream(spec, tmp_path, show_progress=False)
    land_initial_rows(
        spark, "landing.customers_initial_rows", tmp_path / "initial_state.jsonl", SCHEMA
    )
    land_batch_files(spark, FEED, sorted((tmp_path / "batches").glob("batch-*.jsonl")))
    dbt("run", *SELECT)
    assert spark.table(HISTORY).where("is_ambiguous").count() == 0
    tied = (
        spark.table(HISTORY)
        .where("event_seq is not null and not is_deleted and version_id not like '%:out'")
        .orderBy("valid_from")
        .first()
    )
    event = {
        "change_type": "update",
        "event_ts": tied.valid_from.isoformat(sep=" "),
        "event_seq": tied.event_seq,
        "column_names": ["id", "name", "amount"],
        "column_values": [str(tied.id), "tied", "7"],
        "old_key_names": ["id"],
        "old_key_values": [str(tied.id)],
    }
    path = tmp_path / "batch-tie.jsonl"
    path.write_text(json.dumps(event) + "\n", encoding="utf-8")
    land_batch_files(spark, FEED, [path])
    dbt("run", *SELECT)

    ledger = spark.table(f"{MODULE_SCHEMA}.int_change_events__customers_ledger")
    owners = ledger.where("status = 'applied'").select("event_fingerprint", "process_id")
    ambiguous = spark.table(HISTORY).where("is_ambiguous").drop("process_id")
    counted = {
        r.process_id: r["count"]
        for r in ambiguous.join(owners, "event_fingerprint").groupBy("process_id").count().collect()
    }
    summary = spark.table(f"{MODULE_SCHEMA}.change_events__customers_run_summary")
    rows = {r.process_id: r.ambiguous_versions for r in summary.collect()}
    assert len(rows) == 2 and sorted(counted.values()) == [1, 1]
    assert rows == counted
