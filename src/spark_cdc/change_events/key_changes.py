"""A primary-key change that a source sends as a delete of the old key and an insert of the new
key at one position (Debezium does), paired into one key-changing update wherever its two
halves landed: one batch, or two batches resolved in different runs.

A feed with a source position (``event_position``) pairs: the valid events at one (event_ts,
event_seq, event_position), the sequence or the position not null, that are exactly one delete
and one insert (duplicates counted once) are one update from the delete's old key to the
insert's image, when the two keys differ (at one key they stay two events: ambiguous). The
paired row is the insert's, with ``out_fingerprint`` naming the delete (its
move-out version keeps the delete's identity, so a history resolved while only the delete had
arrived converges to the same versions). A feed without a position is not paired (its key
changes are updates already).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import POSITION

# The delete's fingerprint on a paired update (null on every other event).
OUT_FINGERPRINT = "out_fingerprint"


def pair_key_changes(events: DataFrame, schema: TargetSchema) -> DataFrame:
    """``events`` (valid normalized events) with each (delete, insert) pair at one position
    merged into one update (see the module doc); unchanged without an event_position column."""
    if POSITION not in events.columns:
        return events
    at = Window.partitionBy("event_ts", "event_seq", POSITION)
    kind = F.col("change_kind")
    positioned = (F.col("event_seq").isNotNull() | F.col(POSITION).isNotNull()) & F.col(
        "event_ts"
    ).isNotNull()
    group = F.collect_set(F.struct(kind.alias("k"), F.col("event_fingerprint").alias("f"))).over(at)
    kinds = F.transform(group, lambda member: member["k"])
    is_delete = kind == "delete"

    def of_delete(column: str):
        return F.first(F.when(is_delete, F.col(column)), ignorenulls=True).over(at)

    new_key = F.struct(*(F.col("image")[k].alias(k) for k in schema.keys))
    inserted_key = F.first(F.when(kind == "insert", new_key), ignorenulls=True).over(at)
    paired = (
        positioned
        & (F.size(group) == 2)
        & F.array_contains(kinds, "delete")
        & F.array_contains(kinds, "insert")
        & (of_delete("old_key") != inserted_key)
    )

    merged = {
        "change_kind": F.lit("update"),
        "old_key": of_delete("old_key"),
        OUT_FINGERPRINT: of_delete("event_fingerprint"),
    }
    columns = [c for c in events.columns if c != OUT_FINGERPRINT]
    flagged = events.select(
        *(
            F.when(paired, merged[c]).otherwise(F.col(c)).alias(c) if c in merged else c
            for c in columns
        ),
        F.when(paired, merged[OUT_FINGERPRINT]).alias(OUT_FINGERPRINT),
        (paired & is_delete).alias("_paired_delete"),
    )
    # the insert's row is the pair's; the window read the delete's before this filter drops it
    return flagged.where(~F.col("_paired_delete")).drop("_paired_delete")
