"""Findings of the reliability review that need the change-event and schema-drift pipelines end
to end (the hash-CDC ones are in test_hash_cdc_guards, the snapshot one in test_snapshot_guards,
the runtime ones in test_runtime_guards, the README's command lines in test_readme_commands)."""

from __future__ import annotations

import json

import pytest
from support import module_schema

from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.landing import land_initial_rows
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import REASON, normalize_events
from spark_cdc.cli.main import main
from spark_cdc.generators.change_events import SCHEMA as TARGET
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc_dev.main_job import CHANGE_EVENT_SELECTION, change_event_tables

SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)
FEED = "landing.customers_change_events"


@pytest.fixture
def isolated_schema(monkeypatch):
    """Models built in a schema of their own (the profile's schema is SPARK_CDC_SCHEMA)."""

    def use(name: str) -> str:
        monkeypatch.setenv("SPARK_CDC_SCHEMA", name)
        return name

    return use


# --- finding 2: one JSON line nested 500 levels deep ---------------------------------------------


def _deep(levels: int) -> str:
    return '{"event_type": "deep", "a": ' + '{"a": ' * (levels - 1) + "1" + "}" * levels


def test_a_deeply_nested_line_is_quarantined_and_every_other_type_gets_its_silver(
    spark, dbt, tmp_path, isolated_schema
):
    schema = isolated_schema("finding_deep_json")
    batch = tmp_path / "batch_0001"
    batch.mkdir()
    lines = [
        json.dumps({"event_type": "click", "x": 1}),
        _deep(500),
        _deep(5000),
        json.dumps({"event_type": "view", "page": "home"}),
    ]
    (batch / "part-00000.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(tmp_path)}})
    dbt("build", "--select", "stg_schema_drift__events+", "--vars", variables)

    bronze = spark.table(f"{schema}.int_schema_drift__events_bronze")
    errors = {row.parse_error for row in bronze.collect()}
    assert bronze.count() == 4 and errors == {None, "malformed_json"}  # 5,000 levels: refused
    registry = spark.table(f"{schema}.schema_drift__events_registry").where("event_type = 'deep'")
    assert [(r.status, r.conflict_reason) for r in registry.collect()] == [
        ("conflict", "too_deep:500>32")
    ]
    quarantine = spark.table(f"{schema}.schema_drift__events_quarantine")
    reasons = sorted(r.quarantine_reason for r in quarantine.collect())
    assert reasons == ["malformed_json", "too_deep:500>32"]
    for event_type in ("click", "view"):
        assert spark.table(f"{schema}.schema_drift_silver__events__{event_type}").count() == 1
    summary = spark.table(f"{schema}.schema_drift__events_run_summary")
    assert summary.where("event_type in ('click', 'view', 'deep')").count() == 3
    # The next run is not stuck on the line: nothing new, nothing fails.
    dbt("build", "--select", "stg_schema_drift__events+", "--vars", variables)


# --- finding 6: one unparseable event_ts in a landed batch -------------------------------------


def test_an_unparseable_event_ts_lands_and_is_quarantined_while_the_batch_applies(
    spark, dbt, tmp_path
):
    for table in change_event_tables(SCHEMA):
        spark.sql(f"drop table if exists {table}")
    spec = StreamSpec(initial_rows=50, events=400, batches=2, malformed_rate=0.0, seed=5)
    write_stream(spec, tmp_path, show_progress=False)
    first = sorted((tmp_path / "batches").glob("batch-*.jsonl"))[0]
    bad = json.loads(first.read_text().splitlines()[0])
    bad["event_ts"] = "not-a-time"
    with first.open("a", encoding="utf-8") as target:
        target.write(json.dumps(bad) + "\n")
    lines = sum(len(f.read_text().splitlines()) for f in (tmp_path / "batches").glob("*.jsonl"))
    assert main(["land-change-events", str(tmp_path), "--table", FEED]) == 0
    landed = spark.table(FEED)
    assert landed.count() == lines  # every line landed, the bad one too
    (row,) = landed.where("_landing_error is not null").collect()
    assert row._landing_error == "invalid_event_ts" and '"not-a-time"' in row._raw_record

    land_initial_rows(
        spark, "landing.customers_initial_rows", tmp_path / "initial_state.jsonl", TARGET
    )
    dbt("build", "--select", *CHANGE_EVENT_SELECTION["customers"])
    quarantine = spark.table(f"{SCHEMA}.change_events__customers_quarantine").collect()
    assert [(r.quarantine_reason, r.raw_record == row._raw_record) for r in quarantine] == [
        ("invalid_event_ts", True)
    ]
    summary = spark.table(f"{SCHEMA}.change_events__customers_run_summary").first()
    assert summary.events_in == lines
    assert summary.events_in == summary.applied + summary.duplicates + summary.quarantined
    # Every valid event of the batch was applied: the current table is the generator's state.
    expected = {
        (r["id"], r["name"], r["amount"])
        for r in map(json.loads, (tmp_path / "expected_state.jsonl").open())
    }
    current = spark.table(f"{SCHEMA}.change_events__customers_current")
    assert {(r.id, r.name, r.amount) for r in current.collect()} == expected


# --- finding 11: a Debezium message with text after the JSON object ----------------------------


def test_a_debezium_message_with_trailing_garbage_is_unparseable(spark):
    message = json.dumps(
        {"payload": {"op": "c", "after": {"id": 1}, "source": {"ts_ms": 1, "lsn": 1}}}
    )
    frame = spark.createDataFrame(
        [(1, message), (1, message + "garbage"), (1, message + " {}")],
        "_batch_id long, value string",
    )
    target = TargetSchema({"id": "int"}, ("id",))
    events = normalize_events(normalize_debezium(frame, target), target)
    outcome = sorted((r.change_type, r[REASON]) for r in events.collect())
    assert outcome == [
        ("insert", None),
        ("unparseable", "unknown_change_type:unparseable"),
        ("unparseable", "unknown_change_type:unparseable"),
    ]
