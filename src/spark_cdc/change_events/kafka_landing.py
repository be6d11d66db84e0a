"""Land change events (or Debezium messages) from Kafka topics, as the batch files would land.

One landing runs Spark's Kafka source to the end of what the topics hold (``availableNow``) and
lands each micro-batch as the table's next ``_batch_id``, each record one row as a line of a
batch file would be (:mod:`spark_cdc.change_events.landing`), its identity
``kafka://<topic>/<partition>/<offset>`` in ``_source_file``. The offsets are the landing's
checkpoint's, so the next landing starts where this one ended; a micro-batch replayed after a
kill lands none of the records the table already holds (by identity, a look-up that Delta's
statistics on ``_source_file`` keep to the batch's own range), and two landings that overlap
never give one batch id twice (the second fails, having landed nothing). A Debezium topic's
tombstones (records without a value) land too, with a null ``value``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.change_events.landing import (
    ABSENT,
    SOURCE_FILE,
    Landing,
    append_batches,
    ensure_schema,
    event_lines,
    latest_version,
    next_batch_id,
    table_as_of,
)
from spark_cdc.change_events.pipeline import BATCH
from spark_cdc.core.kafka_records import KafkaSource, kafka_records, record_identity
from spark_cdc.core.streaming_queries import is_connect, kafka_failure, start_query


def _not_landed(
    spark: SparkSession, table: str, records: DataFrame, version: int | None
) -> DataFrame:
    """The records of ``records`` whose identity the table does not hold yet (as of
    ``version``)."""
    if version == ABSENT or not spark.catalog.tableExists(table):
        return records
    lowest, highest = records.agg(F.min(SOURCE_FILE), F.max(SOURCE_FILE)).first()
    if lowest is None:
        return records
    landed = (
        table_as_of(spark, table, version)
        .where(F.col(SOURCE_FILE).between(lowest, highest))
        .select(SOURCE_FILE)
    )
    return records.join(landed, SOURCE_FILE, "left_anti")


def land_micro_batch(
    spark: SparkSession, table: str, records: DataFrame, debezium: bool
) -> int | None:
    """Land ``records`` (``value`` text, ``_source_file``) not landed yet as the table's next
    batch; its batch id (None when every record was landed before). A blank value is skipped
    as a blank line is; a record without a value (a Debezium tombstone) lands in a Debezium
    feed, where it counts as a tombstone."""
    present = F.trim(F.col("value")) != ""
    if debezium:
        present = F.col("value").isNull() | present
    records = records.where(present).persist()
    try:
        # One version of the table for both reads (landing._land says why).
        version = latest_version(spark, table)
        new = _not_landed(spark, table, records, version)
        if new.isEmpty():
            return None
        rows = new if debezium else event_lines(new)
        first = next_batch_id(spark, table, version)
        append_batches(spark, table, rows.withColumn(BATCH, F.lit(first).cast("long")), first)
        return first
    finally:
        records.unpersist()


def land_kafka(
    spark: SparkSession, table: str, source: KafkaSource, checkpoint: Path, debezium: bool = False
) -> Landing:
    """Land what the topics hold beyond the checkpoint's offsets, a batch per micro-batch.
    Kafka's own failures (no broker, a refused login) raise KafkaUnavailableError, one line."""
    ensure_schema(spark, table)
    before = next_batch_id(spark, table)

    def each_batch(batch: DataFrame, _batch_id: int) -> None:
        land_micro_batch(batch.sparkSession, table, batch, debezium)

    records = kafka_records(spark, source).select(
        F.col("value").cast("string").alias("value"), record_identity().alias(SOURCE_FILE)
    )
    writer = (
        records.writeStream.queryName(f"land_{table.replace('.', '_')}")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .foreachBatch(each_batch)
    )
    # on Spark Connect, each micro-batch runs in a Python worker the server starts
    query = start_query(writer, remote=is_connect(spark))
    with contextlib.suppress(Exception):  # the query's failure, read below
        query.awaitTermination()
    failure = query.exception()
    if failure is not None:
        raise kafka_failure(failure, source) or failure
    return Landing(list(range(before, next_batch_id(spark, table))))
