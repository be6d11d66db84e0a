"""Stages 2-4: compare an extract with the current state and derive the new current state.

One full outer join on ``key_hash`` between the incoming hashes and the current hashes decides
each key's operation; payloads are then joined back only where needed (I/U from the extract,
broadcast by adaptive execution when the extract is small; N/D/X from the current table).

| incoming | current row (operation)     | mode  | new operation | eff_start_date    |
|----------|-----------------------------|-------|---------------|-------------------|
| present  | none, or D                  | any   | I             | effective date    |
| present  | present, other hash         | any   | U             | effective date    |
| present  | present, same hash          | any   | N             | kept              |
| absent   | D                           | any   | D             | kept (no change)  |
| absent   | X                           | delta | X             | kept (no change)  |
| absent   | other                       | full  | D             | effective date    |
| absent   | other                       | delta | X             | effective date    |

D rows stay in the current table as tombstones (payload of the deleted row). The history
partition of a date holds the current rows whose ``eff_start_date`` is that date: the net
changes of the run (I, U, D, X).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_cdc.hash_cdc.config import DatasetConfig

OPERATIONS = ("I", "U", "D", "X", "N")


def current_columns(config: DatasetConfig) -> list[str]:
    """Payload columns of the current and history tables (sensitive columns excluded)."""
    return [*config.keys, *config.nonkeys, *config.excluded]


def apply_extract(
    incoming: DataFrame,
    previous: DataFrame | None,
    config: DatasetConfig,
    effective_date: str,
) -> DataFrame:
    """The new current state after ``incoming`` (valid staged rows) on ``effective_date``."""
    payload = current_columns(config)
    eff = F.to_date(F.lit(effective_date))
    meta = ["key_hash", "nonkey_hash"]
    if previous is None:
        return incoming.select(
            *payload, *meta, F.lit("I").alias("operation"), eff.alias("eff_start_date")
        )

    incoming_hashes = incoming.select("key_hash", F.col("nonkey_hash").alias("in_hash"))
    current_hashes = previous.select(
        "key_hash",
        F.col("nonkey_hash").alias("cur_hash"),
        F.col("operation").alias("cur_op"),
        F.col("eff_start_date").alias("cur_eff"),
    )
    joined = incoming_hashes.join(current_hashes, "key_hash", "full_outer")
    missing_op = "D" if config.mode == "full" else "X"
    incoming_present = F.col("in_hash").isNotNull()
    operation = (
        F.when(incoming_present & (F.col("cur_hash").isNull() | (F.col("cur_op") == "D")), "I")
        .when(~incoming_present & F.col("cur_op").isin("D", missing_op), F.col("cur_op"))
        .when(~incoming_present, F.lit(missing_op))
        .when(F.col("in_hash") != F.col("cur_hash"), F.lit("U"))
        .otherwise(F.lit("N"))
    )
    decided = joined.select("key_hash", operation.alias("operation"), "cur_op", "cur_eff")
    changed_now = F.col("operation").isin("I", "U") | (
        F.col("operation").isin("D", "X") & ~F.col("operation").eqNullSafe(F.col("cur_op"))
    )
    decided = decided.select(
        "key_hash",
        "operation",
        F.when(changed_now, eff).otherwise(F.col("cur_eff")).alias("eff_start_date"),
    )

    # When the extract is small (a delta extract), adaptive execution broadcasts this side.
    from_incoming = decided.where(F.col("operation").isin("I", "U"))
    new_rows = incoming.select(*payload, *meta).join(from_incoming, "key_hash", "inner")
    kept = previous.select(*payload, *meta).join(
        decided.where(~F.col("operation").isin("I", "U")), "key_hash", "inner"
    )
    return new_rows.unionByName(kept).select(*payload, *meta, "operation", "eff_start_date")
