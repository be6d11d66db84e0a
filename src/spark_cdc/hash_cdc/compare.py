"""Stages 2-4: compare an extract with the current state and derive the new current state.

One full outer join on ``key_hash`` between the incoming hashes and the current hashes decides
each key's operation; each key's payload is then joined back from the side it comes from (I/U
from the extract, N/D/X from the current table) in one join, which adaptive execution makes a
hash join on the narrow decided rows when their partitions are small enough.

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
# Delta keeps file statistics on the operation and the date only: hashes and payload values are
# spread over every file, so statistics on them would never skip one, and collecting them costs
# about a third of a write. The history is partitioned by the date (no statistics on it).
TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": "operation,eff_start_date"}
HISTORY_TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": "operation"}


def property_defaults(properties: dict[str, str]) -> dict[str, str]:
    """Session settings under which Delta gives new tables ``properties`` (a dbt Python model
    cannot pass table properties to the write dbt makes of its result)."""
    prefix = "spark.databricks.delta.properties.defaults."
    return {prefix + name.removeprefix("delta."): value for name, value in properties.items()}


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

    # The payloads are joined back in one join: each key takes its row from the extract (I, U)
    # or from the current table (N, D, X). Adaptive execution hashes the narrow decided rows (one
    # per key of either side) when their partitions are small enough (the runtime's
    # maxShuffledHashJoinLocalMapThreshold), streaming the wide payload rows through unsorted.
    decided = decided.select("*", F.col("operation").isin("I", "U").alias("_from_incoming"))
    payloads = incoming.select(*payload, *meta, F.lit(True).alias("_from_incoming")).unionByName(
        previous.select(*payload, *meta, F.lit(False).alias("_from_incoming"))
    )
    rejoined = payloads.join(decided, ["key_hash", "_from_incoming"])
    return rejoined.select(*payload, *meta, "operation", "eff_start_date")
