"""Kafka topics read with Spark's own Kafka source, each record named by its place in its topic.

A record's identity, ``kafka://<topic>/<partition>/<offset>`` (the offset in 19 digits, so that
identities sort in the order a partition holds them), is what the project keeps where a landed
line keeps its file's path: a write that takes each identity once takes each record once, also
when a micro-batch is replayed after a kill. Offsets are the query's checkpoint's: a new
checkpoint starts at the earliest offset, and a record the broker deleted before the query read
it fails the query (``failOnDataLoss``) instead of being skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F


@dataclass(frozen=True)
class KafkaSource:
    """Where the records come from: the brokers, the topics (comma-separated, Kafka's
    ``subscribe``), the consumer's own settings (``security.protocol``, ``sasl.mechanism``, ...:
    given to it as ``kafka.<name>``) and at most how many offsets one micro-batch takes."""

    bootstrap_servers: str
    topics: str
    # Credentials among them: never shown (repr) or logged.
    consumer_settings: Mapping[str, str] = field(default_factory=dict, repr=False)
    max_offsets_per_trigger: int | None = None


def record_identity() -> Column:
    """``kafka://<topic>/<partition>/<offset>`` of a record of Spark's Kafka source."""
    return F.format_string("kafka://%s/%d/%019d", "topic", "partition", "offset")


def kafka_records(spark: SparkSession, source: KafkaSource) -> DataFrame:
    """The topics' records as a stream (Spark's Kafka source: key, value, topic, partition,
    offset, timestamp, ...)."""
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
    return reader.load()
