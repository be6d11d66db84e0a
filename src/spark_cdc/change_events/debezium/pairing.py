"""A primary-key change, sent by Debezium as a delete of the old key and a create of the new key
at one position, paired into one key-changing update."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_cdc.change_events.normalize import LANDING_ERROR
from spark_cdc.change_events.pipeline import BATCH


def merge_key_changes(events: DataFrame) -> DataFrame:
    """Pairs (delete, create) at one position (event_ts, event_seq and event_position, one of
    the last two not null) in one batch become one key-changing update: the create's row with
    the delete's old key, both messages, and the first landing error of the two (one window over
    the position; the delete's row is dropped)."""
    position = Window.partitionBy(BATCH, "event_ts", "event_seq", "event_position")
    ops = F.collect_list("_op").over(position)
    in_pair = (
        (F.col("event_seq").isNotNull() | F.col("event_position").isNotNull())
        & F.col("event_ts").isNotNull()
        & (F.size(ops) == 2)
        & F.array_contains(ops, "d")
        & (F.array_contains(ops, "c") | F.array_contains(ops, "r"))
    )
    is_delete = F.col("_op") == "d"

    def from_delete(column: str) -> Column:
        return F.first(F.when(is_delete, F.col(column)), ignorenulls=True).over(position)

    paired = {
        "old_key_names": from_delete("old_key_names"),
        "old_key_values": from_delete("old_key_values"),
        LANDING_ERROR: F.coalesce(F.col(LANDING_ERROR), from_delete(LANDING_ERROR)),
        "change_type": F.lit("update"),
        "source_message": F.to_json(
            F.array(from_delete("source_message"), F.col("source_message"))
        ),
    }
    columns = [c for c in events.columns if c != "_op"]
    # the window reads the delete's row before the filter drops it
    flagged = events.select(
        *(
            F.when(in_pair, paired[c]).otherwise(F.col(c)).alias(c) if c in paired else c
            for c in columns
        ),
        in_pair.alias("_pair"),
        is_delete.alias("_delete"),
    )
    return flagged.where(~(F.col("_pair") & F.col("_delete"))).drop("_pair", "_delete")
