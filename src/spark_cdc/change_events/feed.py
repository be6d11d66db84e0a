"""Change events as Spark rows of the feed (for the generators, tests and the demo)."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StructField, StructType

from spark_cdc.change_events.model import ChangeEvent
from spark_cdc.change_events.normalize import FEED_COLUMNS
from spark_cdc.change_events.pipeline import BATCH

FEED_SCHEMA = StructType(
    [StructField(name, kind) for name, kind in FEED_COLUMNS.items()]
    + [StructField(BATCH, LongType())]
)


def feed_frame(
    spark: SparkSession, batches: Iterable[tuple[int, Iterable[ChangeEvent]]]
) -> DataFrame:
    """A feed DataFrame of (batch id, events) pairs."""
    rows = [
        (
            e.change_type,
            e.event_ts,
            e.event_seq,
            None if e.column_names is None else list(e.column_names),
            None if e.column_values is None else list(e.column_values),
            None if e.old_key_names is None else list(e.old_key_names),
            None if e.old_key_values is None else list(e.old_key_values),
            batch_id,
        )
        for batch_id, events in batches
        for e in events
    ]
    return spark.createDataFrame(rows, FEED_SCHEMA)
