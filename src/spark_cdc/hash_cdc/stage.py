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
- ``null_operation:<column>``: the operation column (a delta extract's, when declared) is NULL
  or blank: the row says neither upsert nor delete;
- ``unknown_operation:<column>``: the operation column holds a value that is neither one of
  ``delete_values`` nor one of ``upsert_values`` (compared trimmed, ignoring case);
- ``duplicate_key``: the key occurs more than once in the extract (every copy is quarantined,
  since none of them can be chosen safely).

``key_hash`` is NULL where the key cannot be read (a column-count mismatch, a NULL, undecodable
or uncastable key value): such a row cannot stand for any key. A quarantined row whose key can
be read *holds* its key: the compare keeps that key's current row as it is (see compare).

Counts reconcile: rows in = valid rows + quarantined rows.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
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


def stage_extract(raw: DataFrame, config: DatasetConfig, effective_date: str) -> DataFrame:
    """Typed, hashed rows of one extract with their quarantine reason (see module doc).

    Duplicate keys are counted by a window over ``key_hash`` in the same pass that casts and
    hashes the rows: the extract is read once, and its rows leave the stage partitioned by
    ``key_hash``, the key the compare joins on. (A separate pre-pass over the keys, then a join
    with the duplicates found, read a CSV extract twice: at 1,000,000 rows the window was as
    fast on day 1 and 0.4-1.3 s faster on day 2.)
    """
    columns = config.read_columns
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
    if config.operation_column:
        operation = F.trim(column(config.operation_column))
        blank = operation.isNull() | (operation == "")
        known = [v.upper() for v in (*config.delete_values, *config.upsert_values)]
        failures.append((blank & ~malformed, f"null_operation:{config.operation_column}"))
        failures.append(
            (
                ~blank & ~F.upper(operation).isin(*known) & ~malformed,
                f"unknown_operation:{config.operation_column}",
            )
        )
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
    key_rows = F.count(F.lit(1)).over(Window.partitionBy("key_hash"))
    flagged = hashed.withColumn("__duplicate", F.when(F.col("key_hash").isNotNull(), key_rows > 1))
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
