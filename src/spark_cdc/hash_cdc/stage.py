"""Stage 1: cast an extract to its configured types, hash it, and flag the rows to quarantine.

Input: the extract as read (every column a string, plus ``_malformed_line``, see extracts).
Output: one row per input row with the typed columns, ``key_hash``, ``nonkey_hash``,
``eff_date``, the raw record as JSON (quarantined rows) and ``quarantine_reason`` (NULL for a
valid row; else ``;``-joined reasons):

- ``column_count_mismatch``: a CSV line with more or fewer fields than the header (its raw
  line is the raw record; nothing else is read from it);
- ``null_key:<column>``: a key column is NULL;
- ``invalid_utf8:<column>``: a value that is not valid UTF-8 text (CSV decodes such bytes to
  U+FFFD, the replacement character, which is taken as their mark);
- ``cast_failed:<column>``: a non-NULL value does not cast to the column's type;
- ``duplicate_key``: the key occurs more than once in the extract (every copy is quarantined,
  since none of them can be chosen safely).

``key_hash`` is NULL where the key cannot be read (a column-count mismatch, a NULL, undecodable
or uncastable key value): such a row cannot stand for any key. A quarantined row whose key can
be read *holds* its key: the compare keeps that key's current row as it is (see compare).

Counts reconcile: rows in = valid rows + quarantined rows.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig
from spark_cdc.hash_cdc.extracts import MALFORMED_LINE
from spark_cdc.hash_cdc.hashing import column, row_hash

REASON = "quarantine_reason"
REPLACEMENT_CHARACTER = "\ufffd"


def _typed(name: str, kind: str) -> Column:
    raw = column(name)
    return raw.try_cast(kind) if kind != "string" else raw.cast("string")


def _is_text(frame: DataFrame, name: str) -> bool:
    """Whether the column ``name`` of ``frame`` is a string column."""
    return isinstance(frame.schema[name].dataType, StringType)


def _undecodable(raw: Column) -> Column:
    return ~F.is_valid_utf8(raw) | raw.contains(REPLACEMENT_CHARACTER)


# Above this many suspected probes the exact check runs over every key hash instead.
MAX_SUSPECTS = 10_000


def _duplicate_key_hashes(probes: DataFrame, keyed: DataFrame) -> DataFrame | None:
    """The key hashes that occur more than once (column ``__duplicate`` true), or None when no
    key does.

    ``probes``: a 64-bit hash of each readable key (``__probe``); ``keyed``: each readable key's
    ``key_hash`` and probe. Equal keys have equal probes, so only the keys whose probe occurs
    twice can be duplicates: one aggregate of 8-byte probes (collected: usually none) decides,
    and only the rows of a suspected probe are counted by their key hash (a probe collision
    between different keys is no duplicate). Above MAX_SUSPECTS probes, every key hash is
    counted."""
    suspected = probes.groupBy("__probe").count().where(F.col("count") > 1).select("__probe")
    found = [row[0] for row in suspected.limit(MAX_SUSPECTS + 1).collect()]
    if not found:
        return None
    if len(found) <= MAX_SUSPECTS:
        keyed = keyed.where(F.col("__probe").isin(found))
    return (
        keyed.groupBy("key_hash")
        .count()
        .where(F.col("count") > 1)
        .select("key_hash", F.lit(True).alias("__duplicate"))
    )


def stage_extract(raw: DataFrame, config: DatasetConfig, effective_date: str) -> DataFrame:
    """Typed, hashed rows of one extract with their quarantine reason (see module doc).

    Duplicate keys: see _duplicate_key_hashes. The rows themselves are cast and hashed without
    any shuffle and, when some key occurs twice, flagged by a join with the (usually tiny,
    broadcast) set of duplicate key hashes.
    """
    columns = config.all_columns
    present = {c.lower(): c for c in raw.columns}
    missing = [c for c in columns if c.lower() not in present]
    if missing:
        shown = ", ".join(c for c in raw.columns if c != MALFORMED_LINE)
        raise ConfigError(
            f"{config.name}: the extract has no column {', '.join(missing)} (it has {shown})"
        )
    if MALFORMED_LINE not in raw.columns:
        raw = raw.withColumn(MALFORMED_LINE, F.lit(None).cast("string"))
    malformed = F.col(MALFORMED_LINE).isNotNull()
    raw = raw.select(*[column(present[c.lower()]).alias(c) for c in columns], MALFORMED_LINE)

    # A column that is text already and configured as text is its own raw value. (Two aliases
    # of one column in a projection make Spark's constraint inference try every combination of
    # them: planning alone took about 1.8 s on an extract of 15 columns.)
    text = {c for c, kind in columns.items() if kind == "string" and _is_text(raw, c)}
    raw_names = {c: c if c in text else f"__raw_{position}" for position, c in enumerate(columns)}
    typed = raw.select(
        F.struct(*[column(c) for c in columns]).alias("__raw"),
        MALFORMED_LINE,
        *[column(c).alias(raw_names[c]) for c in columns if c not in text],
        *[column(c) if c in text else _typed(c, kind).alias(c) for c, kind in columns.items()],
    )
    unreadable = {
        c: F.col(raw_names[c]).isNull() | _undecodable(F.col(raw_names[c])) | column(c).isNull()
        for c in config.keys
    }
    key_unreadable = malformed
    for condition in unreadable.values():
        key_unreadable = key_unreadable | condition
    key_hash = F.when(~key_unreadable, row_hash(config.keys))
    failures: list[tuple[Column, str]] = [
        (F.col(raw_names[c]).isNull() & ~malformed, f"null_key:{c}") for c in config.keys
    ]
    failures += [
        (_undecodable(F.col(raw_names[c])) & ~malformed, f"invalid_utf8:{c}") for c in columns
    ]
    failures += [
        (
            F.col(raw_names[c]).isNotNull()
            & column(c).isNull()
            & ~malformed
            & ~_undecodable(F.col(raw_names[c])),
            f"cast_failed:{c}",
        )
        for c, kind in columns.items()
        if kind != "string"
    ]
    # The reasons' array is built only for a row that fails a rule: building it for every row
    # (one element per rule) cost more than casting and hashing together.
    any_failure = reduce(lambda left, right: left | right, (c for c, _ in failures))
    row_reasons = F.array_compact(F.array(*(F.when(c, F.lit(r)) for c, r in failures)))
    hashed = typed.select(
        *[column(c) for c in columns],
        "__raw",
        MALFORMED_LINE,
        key_hash.alias("key_hash"),
        row_hash(config.tracked).alias("nonkey_hash"),
        F.to_date(F.lit(effective_date)).alias("eff_date"),
        F.when(malformed, F.array(F.lit("column_count_mismatch")))
        .when(any_failure, row_reasons)
        .otherwise(F.array().cast("array<string>"))
        .alias("__reasons"),
    )
    probe = F.xxhash64(*[column(c) for c in config.keys])
    duplicates = _duplicate_key_hashes(
        typed.where(~key_unreadable).select(probe.alias("__probe")),
        hashed.where(F.col("key_hash").isNotNull()).select("key_hash", probe.alias("__probe")),
    )
    if duplicates is None:
        flagged = hashed.withColumn("__duplicate", F.lit(None).cast("boolean"))
    else:
        flagged = hashed.join(F.broadcast(duplicates), "key_hash", "left")
    all_reasons = F.concat(
        F.col("__reasons"),
        F.when(F.col("__duplicate"), F.array(F.lit("duplicate_key"))).otherwise(
            F.array().cast("array<string>")
        ),
    )
    quarantined = F.size(all_reasons) > 0
    record = F.coalesce(F.col(MALFORMED_LINE), F.to_json("__raw"))
    return flagged.select(
        *[column(c) for c in columns],
        "key_hash",
        "nonkey_hash",
        "eff_date",
        # The raw record is only kept where it is needed: on quarantined rows.
        F.when(quarantined, record).alias("raw_record"),
        F.when(quarantined, F.concat_ws(";", all_reasons)).alias(REASON),
    )
