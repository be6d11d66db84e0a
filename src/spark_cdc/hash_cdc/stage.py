"""Stage 1: cast an extract to its configured types, hash it, and flag the rows to quarantine.

Input: the extract as read (every column a string). Output: one row per input row with the typed
columns, ``key_hash``, ``nonkey_hash``, ``eff_date``, the raw record as JSON (quarantined rows) and
``quarantine_reason`` (NULL for a valid row; else ``;``-joined reasons):

- ``null_key:<column>``: a key column is NULL;
- ``cast_failed:<column>``: a non-NULL value does not cast to the column's type;
- ``duplicate_key``: the key occurs more than once in the extract (every copy is quarantined,
  since none of them can be chosen safely).

Counts reconcile: rows in = valid rows + quarantined rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig
from spark_cdc.hash_cdc.hashing import row_hash

REASON = "quarantine_reason"


def _typed(column: str, kind: str) -> Column:
    return F.col(column).try_cast(kind) if kind != "string" else F.col(column).cast("string")


def stage_extract(raw: DataFrame, config: DatasetConfig, effective_date: str) -> DataFrame:
    """Typed, hashed rows of one extract with their quarantine reason (see module doc).

    Duplicate keys are found by an aggregate over the key hashes alone (a small shuffle); the
    rows themselves are cast and hashed without any shuffle and flagged by a join with that
    (usually tiny, broadcast) set of duplicate hashes.
    """
    columns = config.all_columns
    missing = [c for c in columns if c not in raw.columns]
    if missing:
        raise ConfigError(
            f"{config.name}: the extract has no column {', '.join(missing)} "
            f"(it has {', '.join(raw.columns)})"
        )
    key_hash = row_hash(config.keys)
    typed_keys = raw.select(*[_typed(c, config.keys[c]).alias(c) for c in config.keys])
    duplicates = (
        typed_keys.select(key_hash.alias("key_hash"))
        .groupBy("key_hash")
        .count()
        .where(F.col("count") > 1)
        .select("key_hash", F.lit(True).alias("__duplicate"))
    )
    typed = raw.select(
        F.struct(*[F.col(c) for c in raw.columns]).alias("__raw"),
        *[F.col(c).alias(f"__raw_{c}") for c in columns if columns[c] != "string"],
        *[_typed(c, kind).alias(c) for c, kind in columns.items()],
    )
    reasons = [F.when(F.col(c).isNull(), F.lit(f"null_key:{c}")) for c in config.keys]
    reasons += [
        F.when(F.col(f"__raw_{c}").isNotNull() & F.col(c).isNull(), F.lit(f"cast_failed:{c}"))
        for c, kind in columns.items()
        if kind != "string"
    ]
    hashed = typed.select(
        *columns,
        "__raw",
        key_hash.alias("key_hash"),
        row_hash(config.tracked).alias("nonkey_hash"),
        F.to_date(F.lit(effective_date)).alias("eff_date"),
        F.array_compact(F.array(*reasons)).alias("__reasons"),
    ).join(F.broadcast(duplicates), "key_hash", "left")
    all_reasons = F.concat(
        F.col("__reasons"),
        F.when(F.col("__duplicate"), F.array(F.lit("duplicate_key"))).otherwise(
            F.array().cast("array<string>")
        ),
    )
    quarantined = F.size(all_reasons) > 0
    return hashed.select(
        *columns,
        "key_hash",
        "nonkey_hash",
        "eff_date",
        # The raw record is only kept (as JSON) where it is needed: on quarantined rows.
        F.when(quarantined, F.to_json("__raw")).alias("raw_record"),
        F.when(quarantined, F.concat_ws(";", all_reasons)).alias(REASON),
    )
