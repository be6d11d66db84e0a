"""History on chosen columns (a source's ``track_history`` / ``track_history_except``).

A version whose tracked columns equal those of the version before it on the same row (same key,
that version not a delete, same created_at: no key change or new life in between) is not a
version of its own: it updates that version in place. The version keeps what identifies its
opening (valid_from, created_at, version_id, event_seq, event_fingerprint, event_position) and
takes the latest change's values, change_type and time (``changed_at``); its valid_to and
is_current are the last absorbed change's, it is ambiguous when any change it holds is.

Applied to the versions of a key in action order, this is the reference model's rule
(change_events.reference). An increment that re-resolves a key from a horizon H must start
before every version that absorbed a change at or after H (lowered_horizon), and deletes the
versions of the keys it re-resolves that no longer exist (absorbed after a late event):
tombstones, flagged for the MERGE's delete (merge_delete_column).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import POSITION
from spark_cdc.hash_cdc.hashing import column

CHANGED_AT = "changed_at"
DELETE_FLAG = "_is_deleted"
# What a version keeps of the change that opened it.
OPENING = ("valid_from", "created_at", "version_id", "event_seq", "event_fingerprint", POSITION)


def _same(name: str, by_key: Window) -> Column:
    """The column equals the previous version's (NULL equal to NULL)."""
    return F.lag(column(name)).over(by_key).eqNullSafe(column(name))


def absorb_untracked(
    versions: DataFrame, schema: TargetSchema, tracked: tuple[str, ...], order: list[str]
) -> DataFrame:
    """``versions`` (every version of their keys from some point on, with ``changed_at`` and
    the action order columns ``order``) with each change of untracked columns only merged into
    the version before it (module doc)."""
    by_key = Window.partitionBy(*(column(k) for k in schema.keys)).orderBy(*order)
    running = by_key.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    absorbed = ~F.col("is_deleted") & (F.lag("is_deleted").over(by_key) == F.lit(False))
    absorbed = absorbed & _same("created_at", by_key)
    for name in tracked:
        absorbed = absorbed & _same(name, by_key)
    opens = ~F.coalesce(absorbed, F.lit(False))
    grouped = versions.withColumn("_group", F.sum(opens.cast("long")).over(running)).withColumn(
        "_next_group", F.lead("_group").over(by_key)
    )
    in_group = (
        Window.partitionBy(*(column(k) for k in schema.keys), F.col("_group"))
        .orderBy(*order)
        .rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    )
    kept = [name for name in OPENING if name in versions.columns]
    opening = F.first(F.struct(*(column(name) for name in kept))).over(in_group)
    merged = grouped.select(
        *(
            opening.getField(name).alias(name)
            if name in kept
            else F.max("is_ambiguous").over(in_group).alias(name)
            if name == "is_ambiguous"
            else column(name)
            for name in versions.columns
        ),
        "_group",
        "_next_group",
    )
    last = F.col("_next_group").isNull() | (F.col("_next_group") != F.col("_group"))
    return merged.where(last).drop("_group", "_next_group")


def lowered_horizon(prior: DataFrame, horizon: datetime) -> datetime:
    """The earliest valid_from of a version that absorbed a change at or after ``horizon``
    (and so again for that time, until none did), or ``horizon``: an increment resolved from
    it starts before every change a late event can reorder."""
    if CHANGED_AT not in prior.columns:  # kept before its columns were tracked: none absorbed
        return horizon
    while True:
        opened = (
            prior.where(
                (F.col("valid_from") < F.lit(horizon)) & (F.col(CHANGED_AT) >= F.lit(horizon))
            )
            .agg(F.min("valid_from"))
            .first()[0]
        )
        if opened is None:
            return horizon
        horizon = opened


def with_tombstones(versions: DataFrame, replaced: DataFrame, schema: TargetSchema) -> DataFrame:
    """``versions`` flagged not deleted, and each version of ``replaced`` (the stored versions
    the increment re-resolved) that ``versions`` no longer holds, flagged deleted."""
    on = [*schema.keys, "version_id"]
    gone = replaced.join(versions.select(*on), on, "left_anti")
    kept = versions.withColumn(DELETE_FLAG, F.lit(False))
    stored = gone.select(*(column(c) for c in versions.columns if c in gone.columns))
    return kept.unionByName(stored.withColumn(DELETE_FLAG, F.lit(True)), allowMissingColumns=True)
