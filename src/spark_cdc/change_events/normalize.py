"""Validate, fingerprint and type raw change events in Spark (the rules of change_events.model).

Input: a DataFrame with the feed columns of change_events.model (extra columns pass through;
absent optional ones — event_seq, old_key_names/values — are added as nulls; a landed feed also
has ``_landing_error``: the reason a line could not be read, see change_events.landing). Output
adds:

- ``change_kind``: the change type lower-cased, ASCII whitespace trimmed (model.change_kind);
- ``event_fingerprint``: the SHA-256 of model.fingerprint (exact-duplicate identity, tie-breaker);
- ``image``: struct of the target columns cast to their types (null for deletes);
- ``old_key``: struct of the key columns cast from the old key (null for inserts);
- ``quarantine_reason``: null when the event can be applied, else the first failed rule.

A feed may also have ``unchanged_columns`` (array of names, see UNCHANGED_COLUMNS); it is kept.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType, TimestampType

from spark_cdc.change_events.model import (
    CHANGE_TYPE_PADDING,
    CHANGE_TYPES,
    FIELD_SEP,
    ITEM_SEP,
    NULL_FIELD,
    NULL_ITEM,
    TargetSchema,
)

POSITION = "event_position"
FEED_COLUMNS = {
    "change_type": StringType(),
    "event_ts": TimestampType(),
    "event_seq": LongType(),
    "column_names": ArrayType(StringType()),
    "column_values": ArrayType(StringType()),
    "old_key_names": ArrayType(StringType()),
    "old_key_values": ArrayType(StringType()),
}
# A feed may also have the source's own position of each change (a Debezium connector family's,
# change_events.debezium.positions): it orders a key's changes before event_ts.
POSITION_TYPE = ArrayType(LongType())
REASON = "quarantine_reason"
# Names of image columns whose value the source did not send (an unchanged TOASTed value in a
# Debezium update): not cast, and the event keeps the column's previous value (resolve).
UNCHANGED_COLUMNS = "unchanged_columns"
# Per image column, the type a source's own schema gives it (a Debezium source that evolves its
# columns: change_events.debezium.evolved_types), null where it gives none: the type of a
# discovered column (change_events.evolution).
COLUMN_TYPES = "column_types"
# Set by the landing on lines it could not read as an event (their first quarantine reason).
LANDING_ERROR = "_landing_error"
RAW_RECORD = "_raw_record"
BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


def with_feed_columns(raw: DataFrame) -> DataFrame:
    """The feed with every feed column present and typed (absent optional ones as nulls)."""
    for name, kind in FEED_COLUMNS.items():
        column = F.col(name) if name in raw.columns else F.lit(None)
        raw = raw.withColumn(name, column.cast(kind))
    if POSITION in raw.columns:
        raw = raw.withColumn(POSITION, F.col(POSITION).cast(POSITION_TYPE))
    return raw


def cast_text(text: Column, spark_type: str) -> Column:
    """An image text cast to its column's type: ``try_cast``, but for a binary column, whose
    text is its bytes in base64 (padded; anything else does not cast)."""
    if spark_type == "binary":
        return F.when(text.rlike(BASE64), F.unbase64(text))
    return text.try_cast(spark_type)


def _text(names: str, values: str, column: str) -> Column:
    """The text of ``column`` in an image (first occurrence), null when absent."""
    position = F.array_position(F.col(names), column)
    return F.when(position > 0, F.try_element_at(F.col(values), position.cast("int")))


def _image_text(column: str) -> str:
    return f"_text_{column}"


def _old_text(column: str) -> str:
    return f"_old_text_{column}"


def _joined(name: str) -> Column:
    return F.coalesce(F.array_join(F.col(name), ITEM_SEP, NULL_ITEM), F.lit(NULL_FIELD))


def fingerprint_column(positioned: bool = False) -> Column:
    """model.fingerprint in Spark (``positioned``: the feed has an event_position column)."""
    text = F.concat_ws(
        FIELD_SEP,
        F.coalesce(F.col("change_type"), F.lit(NULL_FIELD)),
        F.coalesce(F.unix_micros(F.col("event_ts")).cast("string"), F.lit(NULL_FIELD)),
        F.coalesce(F.col("event_seq").cast("string"), F.lit(NULL_FIELD)),
        *(_joined(name) for name in list(FEED_COLUMNS)[3:]),
        # only a positioned event's text has a position (concat_ws skips a null)
        *(
            [F.array_join(F.col(POSITION).cast("array<string>"), ITEM_SEP, NULL_ITEM)]
            if positioned
            else []
        ),
    )
    return F.sha2(text, 256)


def _reason(schema: TargetSchema, truncates: bool = False) -> Column:
    """The first failed rule (model.validate), over the texts staged by normalize_events."""
    kind = F.col("change_kind")
    names, values = F.col("column_names"), F.col("column_values")
    old_names, old_values = F.col("old_key_names"), F.col("old_key_values")
    needs_image = kind.isin("insert", "update")
    needs_old = kind.isin("update", "delete")
    rules: list[tuple[Column, Column]] = [
        (F.col(LANDING_ERROR).isNotNull(), F.col(LANDING_ERROR)),
        (kind == "tombstone", F.lit("tombstone")),
        (
            kind.isNull() | ~kind.isin(*CHANGE_TYPES, *(("truncate",) if truncates else ())),
            F.concat(
                F.lit("unknown_change_type:"), F.coalesce(F.col("change_type"), F.lit("None"))
            ),
        ),
        (F.col("event_ts").isNull(), F.lit("missing_event_ts")),
        (
            needs_image & (names.isNull() | (F.size(names) == 0) | values.isNull()),
            F.lit("missing_image"),
        ),
        (needs_image & (F.size(names) != F.size(values)), F.lit("image_length_mismatch")),
        (
            needs_image & (F.size(F.array_distinct(names)) != F.size(names)),
            F.lit("duplicate_column_name"),
        ),
    ]
    for key in schema.keys:
        rules.append((needs_image & F.col(_image_text(key)).isNull(), F.lit(f"null_key:{key}")))
    unchanged = F.coalesce(F.col(UNCHANGED_COLUMNS), F.array().cast("array<string>"))
    for column in schema.columns:
        failed = F.col(_image_text(column)).isNotNull() & F.col(f"image.{column}").isNull()
        failed = failed & ~F.array_contains(unchanged, column)
        rules.append((needs_image & failed, F.lit(f"cast_failed:{column}")))
    rules += [
        (
            needs_old & (old_names.isNull() | (F.size(old_names) == 0) | old_values.isNull()),
            F.lit("missing_old_key"),
        ),
        (needs_old & (F.size(old_names) != F.size(old_values)), F.lit("old_key_length_mismatch")),
    ]
    for key in schema.keys:
        rules.append((needs_old & F.col(_old_text(key)).isNull(), F.lit(f"null_old_key:{key}")))
    for key in schema.keys:
        failed = F.col(f"old_key.{key}").isNull()
        rules.append((needs_old & failed, F.lit(f"cast_failed:old_{key}")))
    reason = F.when(*rules[0])
    for condition, value in rules[1:]:
        reason = reason.when(condition, value)
    return reason


def normalize_events(raw: DataFrame, schema: TargetSchema, truncates: bool = False) -> DataFrame:
    """The feed with change_kind, event_fingerprint, image, old_key and quarantine_reason
    (``truncates``: whether a ``truncate`` is a change type of the feed, model.validate).

    Each image text is looked up once (staged columns), then cast once, so the rules and the
    typed structs share them."""
    feed = with_feed_columns(raw)
    if LANDING_ERROR not in feed.columns:
        feed = feed.withColumn(LANDING_ERROR, F.lit(None).cast("string"))
    if UNCHANGED_COLUMNS not in feed.columns:
        feed = feed.withColumn(UNCHANGED_COLUMNS, F.lit(None).cast("array<string>"))
    texts = [
        _text("column_names", "column_values", c).alias(_image_text(c)) for c in schema.columns
    ]
    old_texts = [
        _text("old_key_names", "old_key_values", k).alias(_old_text(k)) for k in schema.keys
    ]
    staged = feed.select(
        "*",
        F.lower(F.btrim(F.col("change_type"), F.lit(CHANGE_TYPE_PADDING))).alias("change_kind"),
        fingerprint_column(POSITION in feed.columns).alias("event_fingerprint"),
        *texts,
        *old_texts,
    )
    unchanged = F.coalesce(F.col(UNCHANGED_COLUMNS), F.array().cast("array<string>"))
    image = F.struct(
        *(
            F.when(~F.array_contains(unchanged, c), cast_text(F.col(_image_text(c)), t)).alias(c)
            for c, t in schema.columns.items()
        )
    )
    old_key = F.struct(
        *(cast_text(F.col(_old_text(k)), schema.columns[k]).alias(k) for k in schema.keys)
    )
    typed = staged.select("*", image.alias("image"), old_key.alias("old_key"))
    kind = F.col("change_kind")
    temporary = [_image_text(c) for c in schema.columns] + [_old_text(k) for k in schema.keys]
    return typed.select(
        *feed.columns,
        "change_kind",
        "event_fingerprint",
        _reason(schema, truncates).alias(REASON),
        F.when(kind.isin("insert", "update"), F.col("image")).alias("image"),
        F.when(kind.isin("update", "delete"), F.col("old_key")).alias("old_key"),
    ).drop(*temporary)
