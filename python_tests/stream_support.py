"""The schema-drift stream's drift scenario, run by the suite on the embedded runtime and by the
engine suite on the warm Connect engine and a standalone cluster."""

from __future__ import annotations

import json
from pathlib import Path

from spark_cdc.schema_drift.silver import last_refresh_completed
from spark_cdc.schema_drift.stream import FeedTables, start_stream


def _land(root: Path, number: int, lines: list) -> None:
    folder = root / f"batch_{number:04d}"
    folder.mkdir(parents=True)
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    (folder / "part-00000.jsonl").write_text("\n".join(text) + "\n", encoding="utf-8")


def drift_while_running(spark, work: Path, tables: FeedTables) -> None:
    """The talk's example: `has_plugins` appears in a later file; one running query registers
    version 2 and adds the column, gives a new event type its table, and keeps a conflicting
    variation and a malformed line out of silver (in the registry and bronze, with why). The
    feed's tables must not exist yet."""
    talk = f"{tables.schema}.{tables.silver_prefix}1_1_b05e2447"  # "1.1": sanitized + hash
    root = work / "landing"
    root.mkdir()
    run = start_stream(spark, str(root), tables, work / "checkpoint", trigger_interval="1 second")
    try:
        _land(
            root,
            1,
            [
                {"event_type": "1.1", "user_agent": "Mozilla/5.0"},
                {"event_type": "purchase", "amount": 3, "device": {"os": "linux"}},
            ],
        )
        run.query.processAllAvailable()
        before = spark.table(talk).columns
        # The first micro-batch created the log and named its refresh there (whose log rows are
        # in): the next refresh checks no silver table for rows of a failed one.
        first_log = spark.table(tables.silver_loads)
        first_completed = last_refresh_completed(spark, tables.silver_loads, first_log)
        _land(
            root,
            2,
            [
                {"event_type": "1.1", "user_agent": "curl/8.5", "has_plugins": True},
                {"event_type": "signup", "email": "a@example.com"},
                {"event_type": "purchase", "amount": 4, "device": "pc"},
                "{not json",
            ],
        )
        run.query.processAllAvailable()
        assert run.query.isActive  # the same query took both files in
    finally:
        run.query.stop()
        run.finish()

    assert "has_plugins" not in before
    assert first_completed
    assert last_refresh_completed(spark, tables.silver_loads, spark.table(tables.silver_loads))
    rows = spark.table(talk).collect()
    assert {(r.user_agent, r.has_plugins) for r in rows} == {
        ("Mozilla/5.0", None),
        ("curl/8.5", True),
    }
    registry = spark.table(tables.registry)
    versions = registry.where("event_type = '1.1'").select("schema_version", "status").collect()
    assert sorted(tuple(r) for r in versions) == [(1, "accepted"), (2, "accepted")]
    assert spark.table(f"{tables.schema}.{tables.silver_prefix}signup").count() == 1
    purchase = registry.where("event_type = 'purchase'").collect()
    assert sorted(r.status for r in purchase) == ["accepted", "conflict"]
    assert spark.table(f"{tables.schema}.{tables.silver_prefix}purchase").count() == 1
    malformed = spark.table(tables.bronze).where("has_parse_error").collect()
    assert [(r.payload, r.parse_error) for r in malformed] == [("{not json", "malformed_json")]
    # Monitoring: both files' batches, as written by the listener and by foreachBatch.
    progress = spark.table(tables.stream_progress).collect()
    assert sum(r.input_rows for r in progress) == 6
    assert sum(r.events for r in spark.table(tables.stream_batches).collect()) == 6
