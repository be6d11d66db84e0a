"""A captured table applied by the change-event pipeline as a Debezium source's dbt models
apply it (ledger, then history), delivery by delivery, from files or through Kafka."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from change_event_support import HIGH
from debezium_support import Capture
from pyspark.sql import DataFrame

from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.debezium.types import DebeziumSettings
from spark_cdc.change_events.landing import land_debezium_files
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import RAW_RECORD
from spark_cdc.change_events.pipeline import (
    SourceConfig,
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
            broker, checkpoint = self.kafka
            command = ["land-change-events", "--table", self.landed, "--debezium"]
            command += ["--kafka-bootstrap-servers", broker, "--kafka-topics", topic]
            assert main([*command, "--checkpoint", str(checkpoint)]) == 0
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
