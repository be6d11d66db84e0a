"""Change events as Spark rows of the feed (for the generators, tests and the demo)."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

from spark_cdc.change_events.model import ChangeEvent
from spark_cdc.change_events.normalize import (
    FEED_COLUMNS,
    POSITION,
    POSITION_TYPE,
    UNCHANGED_COLUMNS,
)
from spark_cdc.change_events.pipeline import BATCH

FEED_SCHEMA = StructType(
    [StructField(name, kind) for name, kind in FEED_COLUMNS.items()]
    + [StructField(BATCH, LongType())]
)


def feed_frame(
    spark: SparkSession, batches: Iterable[tuple[int, Iterable[ChangeEvent]]]
) -> DataFrame:
    """A feed DataFrame of (batch id, events) pairs; with ``unchanged_columns`` when an event
    leaves columns unchanged, with ``event_position`` when an event has one."""
    pairs = [(batch_id, e) for batch_id, events in batches for e in events]
    unchanged = any(e.unchanged_columns for _, e in pairs)
    positioned = any(e.event_position is not None for _, e in pairs)
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
            *([list(e.unchanged_columns or ()) or None] if unchanged else []),
            *([None if e.event_position is None else list(e.event_position)] if positioned else []),
        )
        for batch_id, e in pairs
    ]
    fields = list(FEED_SCHEMA.fields)
    if unchanged:
        fields.append(StructField(UNCHANGED_COLUMNS, ArrayType(StringType())))
    if positioned:
        fields.append(StructField(POSITION, POSITION_TYPE))
    return spark.createDataFrame(rows, StructType(fields))
