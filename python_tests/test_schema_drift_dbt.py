"""Schema drift end to end through dbt: the talk's example, nested objects, arrays of objects, a
new event type mid-run, type conflicts, malformed lines, reruns and a full refresh."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from support import SqlStatements, module_schema, table_digests

SELECT = ["--select", "stg_schema_drift__events+"]
SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)
PREFIX = f"{SCHEMA}.schema_drift_silver__events__"
TALK = f"{PREFIX}1_1_b05e2447"  # "1.1" is not [a-z0-9_]+: sanitized name + hash prefix

BATCHES = [
    [
        {"event_type": "1.1", "user_agent": "Mozilla/5.0"},
        {"user_agent": "curl/8.5", "event_type": "1.1"},
        {"event_type": "purchase", "amount": 3, "device": {"os": "linux"}, "items": [{"sku": "a"}]},
        "{not json",
    ],
    [
        {"event_type": "1.1", "user_agent": "Mozilla/5.0", "has_plugins": True},
        {
            "event_type": "purchase",
            "amount": 3.5,
            "device": {"os": "ios", "screen": {"width": 390}},
            "items": [{"sku": "b", "qty": 2}, {"sku": "c"}],
        },
        {"event_type": "purchase", "amount": 4, "device": "pc"},
        {"event_type": "signup", "email": "a@example.com"},
        [1, 2],
        {"user_agent": "no type"},
    ],
    [
        {"has_plugins": False, "event_type": "1.1", "user_agent": "Safari"},
        {"event_type": "signup", "email": "b@example.com"},
    ],
]


def _land(number: int) -> None:
    root = Path(os.environ["SPARK_CDC_HOME"]) / "landing" / "schema_drift" / "events"
    folder = root / f"batch_{number:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [line if isinstance(line, str) else json.dumps(line) for line in BATCHES[number - 1]]
    (folder / "part-00000.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _rows(spark, table, *columns: str) -> set[tuple]:
    """Rows of a table (by name) or a DataFrame, restricted to ``columns`` (arrays as tuples)."""
    frame = spark.table(table) if isinstance(table, str) else table
    return {
        tuple(tuple(map(tuple, v)) if isinstance(v, list) else v for v in row)
        for row in frame.select(*columns).collect()
    }


def _registry(spark) -> set[tuple]:
    frame = spark.table(f"{SCHEMA}.schema_drift__events_registry")
    return {tuple(row) for row in frame.drop("registered_at", "process_id").collect()}


def _silver(spark) -> dict[str, Counter]:
    tables = [
        t.name
        for t in spark.catalog.listTables(SCHEMA)
        if "schema_drift_silver__events__" in t.name
    ]
    return {
        name: Counter(
            tuple(sorted((k, repr(v)) for k, v in row.asDict().items()))
            for row in spark.table(f"{SCHEMA}.{name}").collect()
        )
        for name in tables
    }


def _feed_tables(spark) -> dict:
    """Digests of the feed's tables, but bronze's file log: it lags one load (a run logs the
    loads before its own), so a rerun that takes nothing in logs the load before it."""
    digests = table_digests(spark, SCHEMA, "schema_drift", "int_schema_drift__")
    return {name: value for name, value in digests.items() if not name.endswith("_landed_files")}


def _start_clean(spark) -> None:
    """No landed file and no schema-drift relation left by an earlier test of this process (the
    stream's tests write the same tables)."""
    shutil.rmtree(Path(os.environ["SPARK_CDC_HOME"]) / "landing" / "schema_drift", True)
    spark.sql(f"create schema if not exists {SCHEMA}")  # this file may run first
    for table in spark.catalog.listTables(SCHEMA):
        if table.name.startswith(("schema_drift", "int_schema_drift__", "stg_schema_drift__")):
            kind = "view" if table.tableType == "VIEW" else "table"
            spark.sql(f"drop {kind} if exists {SCHEMA}.{table.name}")


@pytest.fixture(scope="module")
def built(spark, dbt):
    """Batch 1 built, then batch 2 built: the state after both builds."""
    _start_clean(spark)
    _land(1)
    dbt("build", *SELECT)
    first = {
        "talk_columns": spark.table(TALK).columns,
        "registry": spark.table(f"{SCHEMA}.schema_drift__events_registry").collect(),
    }
    _land(2)
    dbt("build", *SELECT)
    return first


def test_source_freshness_is_the_newest_landed_file(dbt, built):
    """`dbt source freshness` of the landing folder: the modification time of its newest file,
    as the file system gives it."""
    root = Path(os.environ["SPARK_CDC_HOME"]) / "landing" / "schema_drift" / "events"
    newest_ms = max(path.stat().st_mtime_ns for path in root.rglob("*.jsonl")) // 1_000_000
    result = dbt("source", "freshness", "--select", "source:schema_drift__events.raw_events")
    (entry,) = [r for r in result.result.results if r.node.resource_type == "source"]
    assert entry.status == "pass"
    assert round(entry.max_loaded_at.timestamp() * 1000) == newest_ms


def test_talk_example_new_attribute_gives_version_two_and_a_boolean_column(spark, built):
    assert [r.schema_version for r in built["registry"] if r.event_type == "1.1"] == [1]
    assert "has_plugins" not in built["talk_columns"]
    registry = spark.table(f"{SCHEMA}.schema_drift__events_registry").where("event_type = '1.1'")
    versions = sorted((r.schema_version, r.variation_signature) for r in registry.collect())
    assert versions == [
        (1, "OBJECT<event_type: STRING, user_agent: STRING>"),
        (2, "OBJECT<event_type: STRING, has_plugins: BOOLEAN, user_agent: STRING>"),
    ]
    assert dict(spark.table(TALK).dtypes)["has_plugins"] == "boolean"
    assert _rows(spark, TALK, "user_agent", "has_plugins", "_schema_version") == {
        ("Mozilla/5.0", None, 1),
        ("Mozilla/5.0", True, 2),
        ("curl/8.5", None, 1),
    }


def test_nested_objects_flatten_and_arrays_of_objects_stay_arrays(spark, built):
    purchase = spark.table(f"{PREFIX}purchase")
    types = dict(purchase.dtypes)
    assert types["device__os"] == "string"
    assert types["device__screen__width"] == "bigint"
    assert types["items"] == "array<struct<qty:bigint,sku:string>>"
    # amount was an integer, then 3.5: widened to double, the table rebuilt from bronze
    assert types["amount"] == "double"
    assert _rows(spark, purchase, "amount", "device__os", "device__screen__width", "items") == {
        (3.0, "linux", None, ((None, "a"),)),
        (3.5, "ios", 390, ((2, "b"), (None, "c"))),
    }
    loads = spark.table(f"{SCHEMA}.schema_drift__events_silver_loads").where(
        "event_type = 'purchase'"
    )
    assert sorted(r.write_mode for r in loads.collect()) == ["create", "rebuild"]


def test_new_event_type_mid_run_gets_its_table(spark, built):
    assert _rows(spark, f"{PREFIX}signup", "event_type", "email") == {("signup", "a@example.com")}
    registry = spark.table(f"{SCHEMA}.schema_drift__events_registry").where("event_type = 'signup'")
    assert [(r.schema_version, r.first_load_seq) for r in registry.collect()] == [(1, 2)]


def test_conflicts_and_malformed_lines_are_quarantined_with_reasons(spark, built):
    quarantine = spark.table(f"{SCHEMA}.schema_drift__events_quarantine")
    found = {
        tuple(r) for r in quarantine.select("load_seq", "event_type", "quarantine_reason").collect()
    }
    # both purchase variations of load 2 are new: the conflicting one comes first (by hash)
    device = "struct<os:string>"
    assert found == {
        (1, None, "malformed_json"),
        (2, None, "not_an_object"),
        (2, None, "missing_event_type"),
        (2, "purchase", f"type_conflict:$.device:{device}->string"),
    }
    bronze = spark.table(f"{SCHEMA}.int_schema_drift__events_bronze")
    assert bronze.count() == sum(len(batch) for batch in BATCHES[:2])
    flagged = bronze.where("has_parse_error").select("payload", "parse_error").collect()
    assert ("{not json", "malformed_json") in {tuple(row) for row in flagged}


def test_run_summary_reconciles_per_event_type_and_load(spark, built):
    summary = {
        (r.event_type, r.load_seq): (
            r.events_in,
            r.parsed,
            r.quarantined,
            r.pending,
            r.new_variations,
            r.schema_version,
        )
        for r in spark.table(f"{SCHEMA}.schema_drift__events_run_summary").collect()
    }
    assert summary == {
        ("1.1", 1): (2, 2, 0, 0, 1, 1),
        ("purchase", 1): (1, 1, 0, 0, 1, 1),
        ("(unknown)", 1): (1, 0, 1, 0, 0, None),
        ("1.1", 2): (1, 1, 0, 0, 1, 2),
        ("purchase", 2): (2, 1, 1, 0, 1, 2),
        ("signup", 2): (1, 1, 0, 0, 1, 1),
        ("(unknown)", 2): (2, 0, 2, 0, 0, None),
    }


def test_rerun_without_new_files_changes_nothing_then_appends_and_full_refresh_agrees(
    spark, dbt, built
):
    registry, silver = _registry(spark), _silver(spark)
    loads = spark.table(f"{SCHEMA}.schema_drift__events_silver_loads").count()
    every_table = _feed_tables(spark)
    dbt("build", *SELECT)
    assert _registry(spark) == registry and _silver(spark) == silver
    assert spark.table(f"{SCHEMA}.schema_drift__events_silver_loads").count() == loads
    # Every table of the feed (bronze, registry, silver, log, quarantine, run summary) as it
    # was, process ids included: a rerun that takes nothing in stamps nothing.
    assert _feed_tables(spark) == every_table

    _land(3)
    dbt("build", *SELECT)
    modes = spark.table(f"{SCHEMA}.schema_drift__events_silver_loads").where("to_load_seq = 3")
    assert sorted((r.event_type, r.write_mode, r.events_written) for r in modes.collect()) == [
        ("1.1", "append", 1),
        ("signup", "append", 1),
    ]
    assert ("Safari", False) in _rows(spark, TALK, "user_agent", "has_plugins")
    registry, silver = _registry(spark), _silver(spark)
    # The quarantine and the run summary, built incrementally (each run read the loads above
    # its marks), hold what a full rebuild from bronze gives.
    marts = [f"{SCHEMA}.schema_drift__events_{name}" for name in ("quarantine", "run_summary")]
    incremental = [Counter(map(tuple, spark.table(mart).collect())) for mart in marts]
    assert sum(incremental[0].values()) == 4
    dbt("build", *SELECT, "--full-refresh")
    assert _registry(spark) == registry
    assert _silver(spark) == silver
    assert [Counter(map(tuple, spark.table(mart).collect())) for mart in marts] == incremental


def test_bronze_knows_its_files_from_its_file_log(spark, dbt, built):
    """The file log beside bronze names exactly the files of bronze's loads (those of the
    latest load once a later run has logged them), and a file landed later in a folder bronze
    took before is taken once."""
    bronze = f"{SCHEMA}.int_schema_drift__events_bronze"
    log = f"{bronze}__landed_files"

    def files(table: str) -> set[tuple]:
        return _rows(spark, spark.table(table).select("load_seq", "source_file").distinct(), "*")

    dbt("build", *SELECT)  # nothing new: logs the loads before it
    assert files(log) == files(bronze) and len(files(bronze)) >= 2
    root = Path(os.environ["SPARK_CDC_HOME"]) / "landing" / "schema_drift" / "events"
    late = [{"event_type": "signup", "email": f"late-{n}@example.com"} for n in range(2)]
    (root / "batch_0001" / "part-00001.jsonl").write_text(
        "".join(json.dumps(event) + "\n" for event in late), encoding="utf-8"
    )
    before = spark.table(bronze).count()
    dbt("build", *SELECT)
    dbt("build", *SELECT)
    assert spark.table(bronze).count() == before + 2
    assert files(log) == files(bronze)

    # Bronze's tests read the loads written since they last passed (the build's): the latest.
    (root / "batch_0002" / "part-00001.jsonl").write_text(json.dumps(late[0]) + "\n")
    dbt("run", *SELECT)
    statements = SqlStatements()
    dbt("test", "--select", "int_schema_drift__events_bronze", callbacks=[statements])
    latest = spark.table(bronze).agg({"load_seq": "max"}).first()[0]
    assert f"where ((`load_seq` >= {latest}))" in "\n".join(statements)
