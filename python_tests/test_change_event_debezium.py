"""Debezium change-event JSON normalized into the feed and resolved like any other events."""

from __future__ import annotations

import json
from datetime import datetime

from change_event_support import HIGH, state_of

from spark_cdc.change_events.debezium import normalize_debezium
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.pipeline import SourceConfig, history_increment, ledger_increment

SCHEMA = TargetSchema({"id": "int", "name": "string", "vip": "boolean"}, ("id",))
MS = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC


def message(op, before=None, after=None, lsn=None, second=0, envelope=True) -> str:
    payload = {
        "before": before,
        "after": after,
        "source": {"connector": "postgresql", "ts_ms": MS + second * 1000, "lsn": lsn},
        "op": op,
        "ts_ms": MS + second * 1000 + 5,
    }
    return json.dumps({"schema": {}, "payload": payload} if envelope else payload)


def at(second: int) -> datetime:
    return datetime(2026, 1, 1, 0, 0, second)


def test_debezium_messages_resolve_with_key_changes_and_quarantine(spark):
    update = message("u", None, {"id": 1, "name": "b", "vip": True}, lsn=20, second=2)
    batch_1 = [
        message("c", None, {"id": 1, "name": "a", "vip": False}, lsn=10, second=1),
        update,
        message("r", None, {"id": 3, "name": "snap"}, lsn=5, second=0, envelope=False),
    ]
    batch_2 = [
        update,  # redelivered (at-least-once)
        message("d", {"id": 1}, None, lsn=30, second=3),  # primary-key change 1 -> 2 ...
        message("c", None, {"id": 2, "name": "b2", "vip": True, "extra": 1}, lsn=30, second=3),
        message("d", {"id": 3, "name": "snap"}, None, lsn=40, second=4),
        message("t", lsn=50, second=5),
        None,  # Kafka tombstone following a delete
        "{not json",
    ]
    rows = [(b, v) for b, batch in ((1, batch_1), (2, batch_2)) for v in batch]
    messages = spark.createDataFrame(rows, "_batch_id long, value string")
    feed = normalize_debezium(messages, SCHEMA)
    assert feed.count() == len(rows) - 1  # the key-change pair became one update

    config = SourceConfig("dbz", SCHEMA)
    ledger = ledger_increment(feed, None, config, "run").localCheckpoint()
    history = history_increment(ledger, None, None, config, HIGH, "run")
    assert state_of(history, SCHEMA) == {(2,): (2, "b2", True, at(1), at(3), "update")}
    statuses = {
        (row["change_type"], row["status"], row["quarantine_reason"]) for row in ledger.collect()
    }
    assert statuses == {
        ("insert", "applied", None),
        ("update", "applied", None),
        ("update", "duplicate", None),
        ("delete", "applied", None),
        ("t", "quarantined", "unknown_change_type:t"),
        ("tombstone", "quarantined", "unknown_change_type:tombstone"),
        ("unparseable", "quarantined", "unknown_change_type:unparseable"),
    }
    merged = ledger.where("event_seq = 30").first()
    assert merged["old_key_values"] == ["1"] and len(json.loads(merged["source_message"])) == 2
