"""A current-only source (``stored_as_scd_type: 1``): its current table written from the
ledger's increment, with no history table.

The current rows are the same as a history source's (the reference's state: every applied event
in position order). Without a history, the state of a key at an earlier time is not stored, so
an increment is resolved from what is:

- **in order** (no applied event of the earlier batches is at or after the increment's earliest
  applied event_ts, the horizon H, and no current row was set at or after H: an existing row
  set after the events around it): the state at H is the current table itself. The keys the new
  events act on (grown by the keys key changes link to them) are resolved from their current
  rows, restored at their updated_at before the new events;
- **late** (otherwise, or the table has no mark): those keys are resolved again from every
  applied event of the ledger (and the existing rows), from the beginning. A late event costs
  a read of the whole ledger; a history source reads from its time.

The rows written are those keys' last versions: a live one replaces the key's row, a deleted one
removes it (the MERGE's ``_is_deleted``).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.evolution import columns_in
from spark_cdc.change_events.pipeline import (
    BATCH,
    history_increment,
    initial_versions,
)
from spark_cdc.change_events.resolve import current_changes, current_rows

# The horizon of a late increment: before any event (the whole ledger is resolved again).
BEFORE_EVERY_EVENT = datetime(1, 1, 1)


def current_as_versions(
    current: DataFrame, config: SourceConfig, high_dttm: str, process_id: str
) -> DataFrame:
    """The current table's rows as open versions valid from their updated_at, restored as
    existing rows are (an existing row set at or after the horizon is restored at its time)."""
    schema = columns_in(config.schema, current.schema)
    versions = initial_versions(current, schema, process_id)
    return versions.withColumn("valid_to", F.to_timestamp(F.lit(high_dttm)))


def in_order(ledger: DataFrame, current: DataFrame, through: int | None, horizon: datetime) -> bool:
    """Whether the current table is the state at ``horizon``: no applied event of the batches
    up to ``through`` is at or after it, and no current row was set at or after it (an existing
    row set later than the events around it). Delta skips the files that end before it."""
    if through is None:
        return False
    earlier = ledger.where(
        (F.col(BATCH) <= F.lit(through))
        & (F.col("status") == "applied")
        & (F.col("event_ts") >= F.lit(horizon))
    )
    if not earlier.limit(1).isEmpty():
        return False
    return current.where(F.col("updated_at") >= F.lit(horizon)).limit(1).isEmpty()


def full_current(
    ledger: DataFrame,
    initial: DataFrame | None,
    config: SourceConfig,
    high_dttm: str,
    process_id: str,
) -> DataFrame:
    """Every current row, from the whole ledger (and the existing rows ``initial``)."""
    versions = history_increment(ledger, None, initial, config, high_dttm, process_id)
    return current_rows(versions, columns_in(config.schema, versions.schema))


def current_increment(
    ledger: DataFrame,
    current: DataFrame,
    initial: DataFrame | None,
    config: SourceConfig,
    high_dttm: str,
    process_id: str,
    through: int | None,
    horizon: datetime,
) -> DataFrame:
    """The rows to MERGE into ``current`` (flagged ``_is_deleted``) for the ledger batches above
    ``through`` (the table's mark), whose earliest applied event_ts is ``horizon``."""
    prior = current_as_versions(current, config, high_dttm, process_id)
    if not in_order(ledger, current, through, horizon):
        base = prior.limit(0)
        if initial is not None:
            existing = initial_versions(initial, config.schema, process_id)
            base = base.unionByName(existing, allowMissingColumns=True)
        prior, horizon = base, BEFORE_EVERY_EVENT
    versions = history_increment(
        ledger, prior, None, config, high_dttm, process_id, through, horizon
    )
    return current_changes(versions, columns_in(config.schema, versions.schema))
