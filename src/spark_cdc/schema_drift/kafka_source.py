"""A Kafka topic as the schema-drift stream's source: each record's value one JSON line.

The records are given the shape of the landing folder's lines (``landing_lines``), so bronze and
everything after it take them in unchanged:

- ``payload``: the record's value as UTF-8 text (bytes that are not UTF-8 become U+FFFD, and the
  line is kept with its parse error, as a landed file's);
- ``source_file``: the record's identity, ``kafka://<topic>/<partition>/<offset>`` (the offset in
  19 digits, so that identities sort in the order the partition holds them: a variation's
  prototype in the registry is its first record): bronze takes each identity once, so a
  micro-batch replayed after a kill adds none of the records it had already loaded;
- ``batch_id``: ``<topic>-<partition>-<block>``, the block being the offset divided by
  :data:`OFFSETS_PER_BATCH_ID`: few per micro-batch, so bronze's data skipping reads only its own
  blocks when it looks for records already taken;
- ``file_modified_at``: the record's timestamp (when the broker or producer stamped it): the
  stream's latencies start there.

Offsets are the query's checkpoint's (``startingOffsets`` earliest for a new checkpoint); a
record the broker deleted before the query read it fails the query (``failOnDataLoss``), so no
record is skipped unnoticed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

OFFSETS_PER_BATCH_ID = 100_000


@dataclass(frozen=True)
class KafkaSource:
    """Where the records come from: the brokers, the topics (comma-separated, Kafka's
    ``subscribe``), the consumer's own settings (``security.protocol``, ``sasl.mechanism``, ...:
    given to it as ``kafka.<name>``) and at most how many offsets one micro-batch takes."""

    bootstrap_servers: str
    topics: str
    consumer_settings: Mapping[str, str] = field(default_factory=dict)
    max_offsets_per_trigger: int | None = None


def kafka_lines(spark: SparkSession, source: KafkaSource) -> DataFrame:
    """The topics' records as a stream of landing lines (payload, source_file,
    file_modified_at, batch_id)."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", source.bootstrap_servers)
        .option("subscribe", source.topics)
        .option("startingOffsets", "earliest")
        .option("failOnDataLoss", "true")
    )
    for name, value in source.consumer_settings.items():
        reader = reader.option(f"kafka.{name}", value)
    if source.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(source.max_offsets_per_trigger))
    block = F.floor(F.col("offset") / F.lit(OFFSETS_PER_BATCH_ID)).cast("long")
    return reader.load().select(
        F.col("value").cast("string").alias("payload"),
        F.format_string("kafka://%s/%d/%019d", "topic", "partition", "offset").alias("source_file"),
        F.col("timestamp").alias("file_modified_at"),
        F.format_string("%s-%d-%06d", F.col("topic"), F.col("partition"), block).alias("batch_id"),
    )
