"""Change-event test helpers: incremental runs in memory, comparisons to the reference."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from pyspark.sql import DataFrame, SparkSession

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.current_only import current_increment, full_current
from spark_cdc.change_events.feed import feed_frame
from spark_cdc.change_events.model import ChangeEvent, TargetSchema
from spark_cdc.change_events.pipeline import (
    history_increment,
    increment_bounds,
    ledger_increment,
    merge_versions,
)
from spark_cdc.change_events.reference import ReferenceResult, StateRow
from spark_cdc.change_events.resolve import current_rows

HIGH = "9999-12-31 23:59:59"


def initial_frame(spark: SparkSession, rows: dict[tuple, StateRow], schema: TargetSchema):
    """Existing rows as the pipeline's ``initial`` input (None when there are none)."""
    if not rows:
        return None
    columns = ", ".join(f"{c} {t}" for c, t in schema.columns.items())
    data = [
        (*(row.values[c] for c in schema.columns), row.created_at, row.updated_at)
        for row in rows.values()
    ]
    return spark.createDataFrame(data, f"{columns}, created_at timestamp, updated_at timestamp")


def run_incrementally(
    spark: SparkSession,
    runs: Sequence[Sequence[tuple[int, Sequence[ChangeEvent]]]],
    config: SourceConfig,
    initial: DataFrame | None = None,
    marks: bool = False,
    to_feed: Callable[[SparkSession, Sequence], DataFrame] = feed_frame,
) -> tuple[DataFrame, DataFrame]:
    """(ledger, history) after one pipeline run per item of ``runs`` (each: batch id, events).
    ``marks``: each history run is told the last batch the history reflects (as the dbt model
    is, from its progress mark) instead of finding its new rows by process id. ``to_feed``:
    what makes a run's feed table of its batches."""
    ledger = history = None
    for number, batches in enumerate(runs):
        process = f"run-{number}"
        through = None
        if marks and ledger is not None:
            through = ledger.agg({"_batch_id": "max"}).first()[0]
        new = ledger_increment(to_feed(spark, batches), ledger, config, process)
        ledger = (
            new if ledger is None else ledger.unionByName(new, allowMissingColumns=True)
        ).localCheckpoint()
        changes = history_increment(ledger, history, initial, config, HIGH, process, through)
        history = (
            changes if history is None else merge_versions(history, changes, config.schema)
        ).localCheckpoint()
    return ledger, history


def run_current_only(
    spark: SparkSession,
    runs: Sequence[Sequence[tuple[int, Sequence[ChangeEvent]]]],
    config: SourceConfig,
    initial: DataFrame | None = None,
) -> tuple[DataFrame, DataFrame]:
    """(ledger, current table) of a current-only source after one run per item of ``runs``,
    each writing the current table as its model's MERGE does (keys, ``_is_deleted``)."""
    ledger = current = None
    keys = list(config.schema.keys)
    for number, batches in enumerate(runs):
        process = f"run-{number}"
        through = None if ledger is None else ledger.agg({"_batch_id": "max"}).first()[0]
        new = ledger_increment(feed_frame(spark, batches), ledger, config, process)
        ledger = (
            new if ledger is None else ledger.unionByName(new, allowMissingColumns=True)
        ).localCheckpoint()
        if current is None:
            current = full_current(ledger, initial, config, HIGH, process).localCheckpoint()
            continue
        horizon, _ = increment_bounds(ledger, process, through)
        if horizon is None:
            continue
        changes = current_increment(
            ledger, current, initial, config, HIGH, process, through, horizon
        )
        kept = current.join(changes.select(*keys), keys, "left_anti")
        written = changes.where("not _is_deleted").drop("_is_deleted")
        current = kept.unionByName(written, allowMissingColumns=True).localCheckpoint()
    return ledger, current


def current_state(current: DataFrame, schema: TargetSchema) -> dict[tuple, tuple]:
    """A current table's rows by key, in state_of's shape."""
    return {
        tuple(row[k] for k in schema.keys): (
            *(row[c] for c in schema.columns),
            row["created_at"],
            row["updated_at"],
            row["last_change_type"],
        )
        for row in current.collect()
    }


def state_of(history: DataFrame, schema: TargetSchema) -> dict[tuple, tuple]:
    """Current rows of a history by key: (values..., created_at, updated_at, last_change_type)."""
    return current_state(current_rows(history, schema), schema)


def expected_state(result: ReferenceResult, schema: TargetSchema) -> dict[tuple, tuple]:
    return {
        key: (
            *(row.values[c] for c in schema.columns),
            row.created_at,
            row.updated_at,
            row.last_change_type,
        )
        for key, row in result.state.items()
    }


def versions_of(history: DataFrame, schema: TargetSchema, changed: bool = False) -> Counter:
    """History as a multiset of (key, valid_from, is_deleted, values, created_at, change_type),
    with ``changed``, then changed_at (None for a deleted version)."""
    return Counter(
        (
            tuple(row[k] for k in schema.keys),
            row["valid_from"],
            row["is_deleted"],
            None if row["is_deleted"] else tuple(row[c] for c in schema.columns),
            row["created_at"],
            row["change_type"],
            *([None if row["is_deleted"] else row["changed_at"]] if changed else []),
        )
        for row in history.collect()
    )


def expected_versions(
    result: ReferenceResult, schema: TargetSchema, changed: bool = False
) -> Counter:
    """The reference's versions in versions_of's shape."""
    return Counter(
        (
            key,
            v.valid_from,
            v.is_deleted,
            None if v.values is None else tuple(v.values[c] for c in schema.columns),
            v.created_at,
            v.change_type,
            *([None if v.is_deleted else v.changed_at] if changed else []),
        )
        for key, versions in result.history.items()
        for v in versions
    )


def status_counts(ledger: DataFrame) -> dict[str, int]:
    return {row["status"]: row["count"] for row in ledger.groupBy("status").count().collect()}
