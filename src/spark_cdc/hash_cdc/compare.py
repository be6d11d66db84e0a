"""Stages 2-4: compare an extract with the current state and derive the new current state.

One full outer join on ``key_hash`` between the incoming rows and the current rows, payloads
included, decides each key's operation and takes its payload from the side it comes from (I/U
from the extract, N/D/X and held keys from the current table): each side is read and shuffled
once. The guards' counts (before anything is written) come from the same decision over the
hashes alone (``decide``).

| incoming | current row (operation)     | mode  | new operation | eff_start_date    |
|----------|-----------------------------|-------|---------------|-------------------|
| held     | any                         | any   | kept as it is | kept              |
| held     | none                        | any   | (no row)      |                   |
| absent*  | other than D                | full  | kept as it is | kept              |
| present  | none, or D                  | any   | I             | effective date    |
| present  | present, other hash         | any   | U             | effective date    |
| present  | present, same hash          | any   | N             | kept              |
| absent   | D                           | any   | D             | kept (no change)  |
| absent   | X                           | delta | X             | kept (no change)  |
| absent   | other                       | full  | D             | effective date    |
| absent   | other                       | delta | X             | effective date    |
| delete** | live (not D)                | delta | D             | effective date    |
| delete** | D                           | delta | D             | kept (no change)  |
| delete** | none                        | delta | (no row)      |                   |
| absent** | any                         | delta | kept as it is | kept              |

** With an operation column (delta extracts that say their deletes): a row whose operation is a
delete closes its key (the deleted row's payload kept as the tombstone), and a key the extract
lacks is not supplied but unchanged, so it stays as it is; the other rows are upserts (I/U/N).

*Held* keys are the keys of quarantined rows whose key could be read (stage): the extract
supplied them, but unusable, so they are neither applied nor taken as missing — their current
row stays exactly as it was. A full extract with rows whose key cannot be read (``key_hash``
NULL) cannot prove any key absent: with ``defer_deletes`` its missing keys are kept as they are
too (absent*: counted as deferred deletes), and a later clean extract deletes them.

D rows stay in the current table as tombstones (payload of the deleted row). The history
partition of a date holds the current rows whose ``eff_start_date`` is that date: the net changes
of the run (I, U, D, X).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.hashing import column

OPERATIONS = ("I", "U", "D", "X", "N")
# Delta keeps file statistics on the operation and the date only: hashes and payload values are
# spread over every file, so statistics on them would never skip one, and collecting them costs
# about a third of a write. The history is partitioned by the date (no statistics on it).
TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": "operation,eff_start_date"}
HISTORY_TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": "operation"}


def current_columns(config: DatasetConfig) -> list[str]:
    """Payload columns of the current and history tables (sensitive columns excluded)."""
    return [*config.keys, *config.nonkeys, *config.excluded]


IN_PREFIX, CURRENT_PREFIX = "__in_", "__cur_"


def is_delete_row(config: DatasetConfig) -> Column:
    """Whether a staged row of ``config``'s extract is a delete (its operation column)."""
    if not config.operation_column:
        return F.lit(False)
    values = [v.upper() for v in config.delete_values]
    return F.coalesce(F.upper(F.trim(column(config.operation_column))).isin(*values), F.lit(False))


def _sides(
    incoming: DataFrame,
    previous: DataFrame,
    held: DataFrame | None,
    payload: list[str],
    config: DatasetConfig,
) -> tuple[DataFrame, DataFrame]:
    """The two sides of the compare: the incoming hashes (a delete: no hash; and the held keys:
    no hash, no payload) and the current hashes, each with the named ``payload`` columns renamed
    apart."""
    delete = is_delete_row(config)
    incoming_side = incoming.select(
        "key_hash",
        F.when(~delete, F.col("nonkey_hash")).alias("in_hash"),
        delete.alias("_delete"),
        F.lit(False).alias("_held"),
        *[column(c).alias(IN_PREFIX + c) for c in payload],
    )
    if held is not None:
        incoming_side = incoming_side.unionByName(
            held.where(F.col("key_hash").isNotNull()).select(
                "key_hash",
                F.lit(None).cast("string").alias("in_hash"),
                F.lit(False).alias("_delete"),
                F.lit(True).alias("_held"),
            ),
            allowMissingColumns=True,
        )
    current_side = previous.select(
        "key_hash",
        F.col("nonkey_hash").alias("cur_hash"),
        F.col("operation").alias("cur_op"),
        F.col("eff_start_date").alias("cur_eff"),
        *[column(c).alias(CURRENT_PREFIX + c) for c in payload],
    )
    return incoming_side, current_side


def _compared(
    incoming: DataFrame,
    previous: DataFrame,
    config: DatasetConfig,
    effective_date: str,
    held: DataFrame | None,
    defer_deletes: bool,
    payload: list[str],
) -> DataFrame:
    """Each key of either side once (one full outer join on ``key_hash``) with its decision:
    operation, eff_start_date, _from_incoming, _held, _deferred, _was_live, _changed_now, and
    the ``payload`` columns of both sides (prefixed)."""
    incoming_side, current_side = _sides(incoming, previous, held, payload, config)
    joined = incoming_side.join(current_side, "key_hash", "full_outer").where(
        # A held key, or a delete, without a current row has nothing to keep or close.
        ~(
            (F.coalesce(F.col("_held"), F.lit(False)) | F.coalesce(F.col("_delete"), F.lit(False)))
            & F.col("cur_hash").isNull()
        )
    )
    held_key = F.coalesce(F.col("_held"), F.lit(False))
    delete = F.coalesce(F.col("_delete"), F.lit(False))
    incoming_present = F.col("in_hash").isNotNull()
    deferred = F.lit(defer_deletes and config.mode == "full") & (
        F.col("in_hash").isNull() & ~held_key & ~F.col("cur_op").eqNullSafe("D")
    )
    # A key a delta extract with an operation column lacks is unchanged: it stays as it is.
    unsupplied = F.lit(bool(config.operation_column)) & (
        ~incoming_present & ~delete & ~held_key & F.col("cur_hash").isNotNull()
    )
    kept = held_key | deferred | unsupplied
    missing_op = "D" if config.mode == "full" else "X"
    operation = (
        F.when(kept, F.col("cur_op"))
        .when(delete, F.lit("D"))  # a live key closed, or a D kept (no row without one)
        .when(incoming_present & (F.col("cur_hash").isNull() | (F.col("cur_op") == "D")), "I")
        .when(~incoming_present & F.col("cur_op").isin("D", missing_op), F.col("cur_op"))
        .when(~incoming_present, F.lit(missing_op))
        .when(F.col("in_hash") != F.col("cur_hash"), F.lit("U"))
        .otherwise(F.lit("N"))
    )
    sides = [column(prefix + c) for c in payload for prefix in (IN_PREFIX, CURRENT_PREFIX)]
    decided = joined.select(
        "key_hash",
        "in_hash",
        "cur_hash",
        operation.alias("operation"),
        "cur_op",
        "cur_eff",
        held_key.alias("_held"),
        deferred.alias("_deferred"),
        kept.alias("_kept"),
        (F.col("cur_hash").isNotNull() & ~F.col("cur_op").eqNullSafe("D")).alias("_was_live"),
        *sides,
    )
    changed_now = ~F.col("_kept") & (
        F.col("operation").isin("I", "U")
        | (F.col("operation").isin("D", "X") & ~F.col("operation").eqNullSafe(F.col("cur_op")))
    )
    eff = F.to_date(F.lit(effective_date))
    return decided.select(
        "key_hash",
        "in_hash",
        "cur_hash",
        "operation",
        F.when(changed_now, eff).otherwise(F.col("cur_eff")).alias("eff_start_date"),
        (F.col("operation").isin("I", "U") & ~F.col("_kept")).alias("_from_incoming"),
        "_held",
        "_deferred",
        "_was_live",
        changed_now.alias("_changed_now"),
        *sides,
    )


def decide(
    incoming: DataFrame,
    previous: DataFrame,
    config: DatasetConfig,
    effective_date: str,
    held: DataFrame | None = None,
    defer_deletes: bool = False,
) -> DataFrame:
    """Each key's decision alone (key_hash, operation, eff_start_date, _from_incoming, _held,
    _deferred, _was_live, _changed_now): the hashes compared without the payloads, for the
    counts the guards check before anything is written."""
    compared = _compared(incoming, previous, config, effective_date, held, defer_deletes, [])
    return compared.drop("in_hash", "cur_hash")


@dataclass(frozen=True)
class DecisionCounts:
    """What a compare decided, for the guards and the run's report."""

    live_before: int
    inserted: int
    updated: int
    deleted: int
    not_supplied: int
    held: int
    deferred: int


def decision_counts(decided: DataFrame) -> DecisionCounts:
    """Count the decided operations (one aggregate over the narrow decided rows)."""
    now = F.col("_changed_now")
    row = decided.agg(
        F.count_if("_was_live").alias("live_before"),
        F.count_if(now & (F.col("operation") == "I")).alias("inserted"),
        F.count_if(now & (F.col("operation") == "U")).alias("updated"),
        F.count_if(now & (F.col("operation") == "D")).alias("deleted"),
        F.count_if(now & (F.col("operation") == "X")).alias("not_supplied"),
        F.count_if("_held").alias("held"),
        F.count_if("_deferred").alias("deferred"),
    ).first()
    return DecisionCounts(*(int(value or 0) for value in row))


def initial_state(incoming: DataFrame, config: DatasetConfig, effective_date: str) -> DataFrame:
    """The current state of a first run: every valid row inserted (a delete has no row to
    close)."""
    return incoming.where(~is_delete_row(config)).select(
        *[column(c) for c in current_columns(config)],
        "key_hash",
        "nonkey_hash",
        F.lit("I").alias("operation"),
        F.to_date(F.lit(effective_date)).alias("eff_start_date"),
    )


def apply_extract(
    incoming: DataFrame,
    previous: DataFrame | None,
    config: DatasetConfig,
    effective_date: str,
    held: DataFrame | None = None,
    defer_deletes: bool = False,
) -> DataFrame:
    """The new current state after ``incoming`` (valid staged rows) on ``effective_date``;
    ``held``: key hashes of quarantined rows whose current row is kept as it is; with
    ``defer_deletes`` a key missing from a full extract is kept as it is instead of deleted.

    One full outer join of the two sides, payloads included: each key takes its payload and
    non-key hash from the extract (I, U) or from the current table (N, D, X, held). Each side is
    read once, so the staged rows need no cache."""
    if previous is None:
        return initial_state(incoming, config, effective_date)
    payload = current_columns(config)
    compared = _compared(incoming, previous, config, effective_date, held, defer_deletes, payload)
    from_incoming = F.col("_from_incoming")
    return compared.select(
        *[
            F.when(from_incoming, column(IN_PREFIX + c))
            .otherwise(column(CURRENT_PREFIX + c))
            .alias(c)
            for c in payload
        ],
        "key_hash",
        F.when(from_incoming, F.col("in_hash")).otherwise(F.col("cur_hash")).alias("nonkey_hash"),
        "operation",
        "eff_start_date",
    )
