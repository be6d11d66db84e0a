"""The project on a real engine: seeds, snapshots day 1 -> day 2 with every metadata value checked,
a Python model, the change-event models after a landing, two overlapping runs of one ledger (the
warm engine only), one hash-CDC date and docs generate.
On a SQL-only engine (Thrift) the SQL parts run and Python models are refused before anything
runs.

What differs between engines is where statements and Python run, not the SQL a strategy
renders (the embedded runtime's tests run every strategy and hard-delete mode): each engine runs
the snapshot whose SQL does the most (``customers_ts_new_record``: closing, inserting and
deletion rows, then its table maintenance). On a cluster, hash CDC and
docs generate are left to the other engines (``only_on``): they add no code path that the
cluster's driver and executors do not already take in the change-event and Python-model tests,
and docs generate reads the same metastore as the embedded runtime's tests."""

from __future__ import annotations

import datetime as dt
import json
import platform
from pathlib import Path

import pytest
from conftest import ENGINE

from spark_cdc.cli.dbt_invoke import last_invocation_id

HIGH = dt.datetime(9999, 12, 31, 23, 59, 59)
ALL_SNAPSHOTS = ("customers_ts_invalidate", "customers_ts_new_record", "customers_check_all")
SNAPSHOTS = ("customers_ts_new_record",)
SQL_ONLY = ENGINE == "thrift"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _rows(query, name: str) -> list[dict]:
    return query(f"select * from spark_cdc.{name}")


def _of(rows: list[dict], customer_id: int) -> list[dict]:
    versions = (r for r in rows if r["customer_id"] == customer_id)
    return sorted(versions, key=lambda r: r["dbt_valid_from"])


@pytest.fixture(scope="module")
def days(dbt, query) -> dict:
    """Snapshots of the day-1 then the day-2 source: (invocation id, start, end) per day."""
    for name in (*ALL_SNAPSHOTS, "customers_snapshot"):
        query(f"drop table if exists spark_cdc.{name}")
    dbt("seed")
    runs = {}
    for day in (1, 2):
        variables = json.dumps({"source_day": day})
        dbt("run", "--select", "stg_customer_states", "--vars", variables)
        started = _now()
        dbt("snapshot", "--select", *SNAPSHOTS, "--vars", variables)
        runs[day] = (last_invocation_id(), started, _now())
    return runs


def test_snapshot_metadata_day1_then_day2(query, days):
    (day1, start1, end1), (day2, start2, end2) = days[1], days[2]
    for name in SNAPSHOTS:
        rows = _rows(query, name)
        untouched = _of(rows, 5)[0]
        assert untouched["dbt_insert_process_id"] == day1, name
        assert start1 <= untouched["dbt_inserted_at"] <= end1, name
        assert untouched["dbt_close_process_id"] is None and untouched["dbt_closed_at"] is None
        assert untouched["dbt_valid_to_high"] == HIGH, name
        old, new = _of(rows, 1)
        assert old["dbt_close_process_id"] == day2 and start2 <= old["dbt_closed_at"] <= end2
        assert old["dbt_insert_process_id"] == day1 and new["dbt_insert_process_id"] == day2
        assert old["dbt_valid_to_high"] == old["dbt_valid_to"], name
        assert new["dbt_valid_to_high"] == HIGH and new["dbt_close_process_id"] is None, name
        # Timestamp strategy: the update closes at the new version's business time.
        assert old["dbt_valid_to"] == dt.datetime(2026, 1, 2, 9) == new["dbt_valid_from"]
        # A hard delete closes at the processing time of the run that saw the key missing.
        deleted = _of(rows, 6)[0]
        assert deleted["dbt_close_process_id"] == day2, name
        assert start2 <= deleted["dbt_valid_to"] <= end2 and deleted["dbt_closed_at"] >= start2
    deletion = _of(_rows(query, "customers_ts_new_record"), 6)[1]
    assert deletion["dbt_is_deleted"] == "True" and deletion["customer_name"] == "Farid"
    assert deletion["dbt_insert_process_id"] == day2 and deletion["dbt_valid_to_high"] == HIGH
    # Its table maintenance (snapshot_optimize_every: 1) ran on this engine after day 2's MERGE.
    history = query("describe history spark_cdc.customers_ts_new_record")
    operations = [row["operation"] for row in sorted(history, key=lambda row: row["version"])]
    assert operations[-2:] == ["MERGE", "OPTIMIZE"], operations


def test_generic_snapshot_tests_pass(dbt, days):
    result = dbt("test", "--select", *SNAPSHOTS, "--vars", json.dumps({"source_day": 2}))
    tests = [r for r in result.result.results if r.node.resource_type == "test"]
    assert tests and {str(r.status) for r in tests} == {"pass"}


def test_a_python_model(dbt, query, days):
    dbt("run", "--select", "stg_customers")
    dbt("snapshot", "--select", "customers_snapshot")
    if SQL_ONLY:
        refused = dbt("run", "--select", "customers_by_segment", expect_success=False)
        assert not refused.success
        assert "runs SQL only" in str(refused.exception) and "customers_by_segment" in str(
            refused.exception
        )
        assert not query("show tables in spark_cdc like 'customers_by_segment'")
        return
    dbt("run", "--select", "customers_by_segment")
    segments = {r["segment"]: r["customer_count"] for r in _rows(query, "customers_by_segment")}
    assert segments == {"retail": 3, "corporate": 2}


def test_change_event_models_after_a_landing(dbt, query, tmp_path, capsys):
    from spark_cdc.cli.main import main
    from spark_cdc.generators.change_events import StreamSpec, write_stream

    spec = StreamSpec(initial_rows=200, events=2_000, batches=3, seed=3)
    manifest = write_stream(spec, tmp_path, False)
    land = [
        "land-change-events",
        str(tmp_path),
        "--table",
        "landing.customers_change_events",
        "--initial-table",
        "landing.customers_initial_rows",
    ]
    if SQL_ONLY:
        # The landing writes tables with Spark code: a SQL-only target says so, lands nothing.
        assert main(land) == 2
        assert "runs SQL only: this command needs a Spark session" in capsys.readouterr().err
        return
    for table in ("landing.customers_change_events", "landing.customers_initial_rows"):
        query(f"drop table if exists {table}")
    for table in (
        "int_change_events__customers_ledger",
        "change_events__customers_history",
        "change_events__customers_current",
    ):
        query(f"drop table if exists spark_cdc.{table}")
    assert main(land) == 0
    select = ["stg_change_events__customers+", "stg_change_events__customers_initial+"]
    dbt("build", "--select", *select)
    expected = {
        (r["id"], r["name"], r["amount"])
        for r in map(json.loads, (tmp_path / "expected_state.jsonl").open())
    }
    current = _rows(query, "change_events__customers_current")
    assert {(r["id"], r["name"], r["amount"]) for r in current} == expected
    (summary,) = _rows(query, "change_events__customers_run_summary")
    assert summary["events_in"] == (
        summary["applied"] + summary["duplicates"] + summary["quarantined"]
    )
    assert summary["applied"] == manifest["applied"]


@pytest.mark.only_on("connect")
def test_two_overlapping_runs_of_one_source_ledger_each_event_once(project, query, tmp_path):
    """Two dbt commands at once on the warm engine (a scheduler's retry beside a run by hand):
    both read the ledger before either writes, and both find the same new batches. Delta lets
    one of the two loads write; the other fails or writes nothing, and a rerun finds nothing
    left."""
    import subprocess

    from support import BIN

    from spark_cdc.cli.main import main
    from spark_cdc.generators.change_events import StreamSpec, write_stream

    write_stream(StreamSpec(initial_rows=0, events=3_000, batches=2, seed=11), tmp_path, False)
    feed = "landing.customers_change_events"
    assert main(["land-change-events", str(tmp_path), "--table", feed]) == 0
    ledger = "spark_cdc.int_change_events__customers_ledger"
    command = [str(BIN / "dbt"), "run", "--select", "int_change_events__customers_ledger"]
    runs = [
        subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=600)[0].decode() for run in runs]
    refused = [out for run, out in zip(runs, outputs, strict=True) if run.returncode != 0]
    assert len(refused) <= 1, outputs
    assert all("DELTA_CONCURRENT_TRANSACTION" in out for out in refused), refused
    again = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:]

    def per_batch(table: str) -> dict[int, int]:
        rows = query(f"select _batch_id, count(*) as n from {table} group by _batch_id")
        return {row["_batch_id"]: row["n"] for row in rows}

    assert per_batch(ledger) == per_batch(feed)


@pytest.mark.only_on("connect", "thrift")
def test_one_hash_cdc_date(dbt, query, tmp_path):
    from spark_cdc.generators.extracts import article_example, generate_extracts

    generate_extracts(article_example((tmp_path / "synthetic" / "2019-06-18",), seed=5), False)
    variables = {"hash_cdc_effective_date": "2019-06-18", "hash_cdc_landing_root": str(tmp_path)}
    build = ["build", "--select", "stg_hash_cdc__synthetic+", "--vars", json.dumps(variables)]
    if SQL_ONLY:
        refused = dbt(*build, expect_success=False)
        assert "runs SQL only" in str(refused.exception)
        assert not query("show tables in spark_cdc like 'stg_hash_cdc__synthetic'")
        return
    for table in ("hash_cdc__synthetic_current", "hash_cdc__synthetic_run_summary"):
        query(f"drop table if exists spark_cdc.{table}")
    dbt(*build)
    (summary,) = _rows(query, "hash_cdc__synthetic_run_summary")
    counts = (summary["rows_in"], summary["valid_rows"], summary["inserted"])
    assert counts == (10_000, 10_000, 10_000)


@pytest.mark.only_on("connect", "thrift")
def test_docs_generate(dbt, query, project: Path, days):
    dbt("docs", "generate")
    catalog = json.loads((project / "target" / "catalog.json").read_text())
    assert {f"snapshot.spark_cdc.{name}" for name in SNAPSHOTS} <= set(catalog["nodes"])
    manifest = json.loads((project / "target" / "manifest.json").read_text())

    # Every column of every node the catalog lists (what this engine built: snapshots, seeds,
    # staging, change-event and hash-CDC models) has a description on the docs site.
    undescribed = []
    for unique_id, node in catalog["nodes"].items():
        described = {
            name.lower()
            for name, column in manifest["nodes"][unique_id]["columns"].items()
            if column.get("description", "").strip()
        }
        undescribed += [f"{unique_id}.{c}" for c in node["columns"] if c.lower() not in described]
    assert undescribed == []

    # Each table's row count on the docs site is the table's count, as this engine gives it.
    tables = {
        unique_id: f"{node['metadata']['schema']}.{node['metadata']['name']}"
        for unique_id, node in catalog["nodes"].items()
        if node["metadata"]["type"] != "view"
    }
    # seeds and snapshots at least (a SQL-only engine builds no Python model)
    assert len(tables) >= len(SNAPSHOTS) + 2
    for unique_id, name in tables.items():
        (counted,) = query(f"select count(*) as n from {name}")
        assert catalog["nodes"][unique_id]["stats"]["rows"]["value"] == counted["n"], unique_id


def test_the_schema_drift_stream(target, query, tmp_path, capsys):
    """The stream takes drift in without a restart on the engine (on Connect its micro-batches
    run in the server's Python worker), and so do an ingest query and event groups; a SQL-only
    target refuses it in one line."""
    if SQL_ONLY:
        from spark_cdc.cli.main import main

        assert main(["stream", "schema-drift", "events"]) == 2
        assert "runs SQL only: this command needs a Spark session" in capsys.readouterr().err
        return
    from stream_support import drift_while_running, groups_take_in_what_one_query_took

    from spark_cdc.schema_drift.stream import FeedTables, check_server_python, is_connect
    from spark_cdc.targets import session_for

    spark = session_for(target)
    if is_connect(spark):
        assert check_server_python(spark).split(".")[:2] == platform.python_version().split(".")[:2]
    query("drop schema if exists stream_check cascade")
    query("create schema stream_check")
    tables = FeedTables("stream_check", "events", "silver__")
    drift_while_running(spark, tmp_path, tables)
    # Event groups: an ingest query and a query per group (on Connect each group's batches run
    # in the server's Python worker too).
    groups_take_in_what_one_query_took(spark, tmp_path, tables)
