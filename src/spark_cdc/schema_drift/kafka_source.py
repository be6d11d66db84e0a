"""A Kafka topic as the schema-drift stream's source: each record's value one JSON line.

The records are given the shape of the landing folder's lines (``landing_lines``), so bronze and
everything after it take them in unchanged:

- ``payload``: the record's value as UTF-8 text (bytes that are not UTF-8 become U+FFFD, and the
  line is kept with its parse error, as a landed file's);
- ``source_file``: the record's identity (:mod:`spark_cdc.core.kafka_records`): bronze takes each
  identity once, so a micro-batch replayed after a kill adds none of the records it had already
  loaded, and a variation's prototype in the registry is its first record;
- ``batch_id``: ``<topic>-<partition>-<block>``, the block being the offset divided by
  :data:`OFFSETS_PER_BATCH_ID`: few per micro-batch, so bronze's data skipping reads only its own
  blocks when it looks for records already taken;
- ``file_modified_at``: the record's timestamp (when the broker or producer stamped it): the
  stream's latencies start there.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.core.kafka_records import KafkaSource, kafka_records, record_identity

__all__ = ["OFFSETS_PER_BATCH_ID", "KafkaSource", "kafka_lines"]

OFFSETS_PER_BATCH_ID = 100_000


def kafka_lines(spark: SparkSession, source: KafkaSource) -> DataFrame:
    """The topics' records as a stream of landing lines (payload, source_file,
    file_modified_at, batch_id)."""
    block = F.floor(F.col("offset") / F.lit(OFFSETS_PER_BATCH_ID)).cast("long")
    return kafka_records(spark, source).select(
        F.col("value").cast("string").alias("payload"),
        record_identity().alias("source_file"),
        F.col("timestamp").alias("file_modified_at"),
        F.format_string("%s-%d-%06d", F.col("topic"), F.col("partition"), block).alias("batch_id"),
    )
