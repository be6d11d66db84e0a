"""A captured table applied by the change-event pipeline as a Debezium source's dbt models
apply it (ledger, then history), delivery by delivery, from files or through Kafka."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from change_event_support import HIGH
from debezium_support import Capture
from pyspark.sql import DataFrame

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.debezium.positions import position_of
from spark_cdc.change_events.debezium.types import DebeziumSettings
from spark_cdc.change_events.landing import land_debezium_files
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import RAW_RECORD
from spark_cdc.change_events.pipeline import (
    history_increment,
    ledger_increment,
    merge_versions,
    new_batches,
)
from spark_cdc.change_events.progress import latest_batch
from spark_cdc.cli.main import main


@dataclass
class Source:
    """One captured table applied by the pipeline, as the source's dbt models do."""

    topic_table: str
    schema: TargetSchema
    settings: DebeziumSettings
    landed: str
    ledger: DataFrame | None = None
    history: DataFrame | None = None
    runs: int = 0
    delivered: set[Path] = field(default_factory=set)
    # (broker, checkpoint): landed from the capture's Kafka topic by `land-change-events`
    kafka: tuple[str, Path] | None = None
    evolve_columns: bool = False

    @property
    def config(self) -> SourceConfig:
        return SourceConfig(
            self.topic_table,
            self.schema,
            evolve_columns=self.evolve_columns,
            truncate=self.settings.truncate,
        )

    def deliver(self, spark, capture: Capture, topic: str) -> list[Path]:
        files = [path for path in capture.files(topic) if path not in self.delivered]
        if self.kafka is not None:
            land_from_kafka(self.landed, self.kafka, topic)
        elif files:
            land_debezium_files(spark, self.landed, [str(path) for path in files])
        self.delivered.update(files)
        feed = spark.table(self.landed)
        if self.ledger is not None:
            feed = new_batches(feed, latest_batch(self.ledger))
        feed = normalize_debezium(feed, self.schema, self.settings, self.evolve_columns)
        feed = feed.withColumnRenamed("source_message", RAW_RECORD)
        process = f"run-{self.runs}"
        self.runs += 1
        new = ledger_increment(feed, self.ledger, self.config, process)
        self.ledger = (
            new if self.ledger is None else self.ledger.unionByName(new)
        ).localCheckpoint()
        changes = history_increment(self.ledger, self.history, None, self.config, HIGH, process)
        merged = (
            changes if self.history is None else merge_versions(self.history, changes, self.schema)
        )
        self.history = merged.localCheckpoint()
        return files


def land_from_kafka(table: str, kafka: tuple[str, Path], topic: str) -> None:
    """``spark-cdc land-change-events --debezium`` of what ``topic`` holds beyond the last
    landing (``kafka``: the broker and the landing's checkpoint)."""
    broker, checkpoint = kafka
    command = ["land-change-events", "--table", table, "--debezium"]
    command += ["--kafka-bootstrap-servers", broker, "--kafka-topics", topic]
    assert main([*command, "--checkpoint", str(checkpoint)]) == 0


def marker_position(capture: Capture, topic: str, step: int) -> tuple[int, ...]:
    """The connector's position of the marker row written after ``step``'s statements (a
    later position than every change of that step)."""
    for path in capture.files(topic):
        for line in path.read_text().splitlines():
            message = json.loads(line) if line.strip() not in ("", "null") else None
            payload = (message or {}).get("payload", message) or {}
            if (payload.get("after") or {}).get("step") == step:
                position, error = position_of(payload["source"])
                assert error is None and position is not None, payload["source"]
                return position
    raise AssertionError(f"no marker of step {step} on {topic}")


def as_of(
    source: Source, position: tuple[int, ...], columns: list[str], text: Callable[[Any, str], Any]
) -> list[dict]:
    """The rows ``source``'s history holds at ``position``: per key, its version of the latest
    position at or before it, unless that is a deletion; each value as ``text`` gives it,
    sorted by key."""
    last: dict = {}
    for row in source.history.collect():
        at = tuple(row["event_position"])
        key = tuple(row[k] for k in source.schema.keys)
        if at <= position and (key not in last or tuple(last[key]["event_position"]) < at):
            last[key] = row
    found = [
        {c: text(row.asDict().get(c), c) for c in columns}
        for row in last.values()
        if not row["is_deleted"]
    ]
    return sorted(found, key=lambda row: tuple(str(row[k]) for k in source.schema.keys))
