"""Debezium change-event JSON normalized into the feed's events (change_events.model).

Input: a DataFrame with ``value`` (the message's JSON text, with or without the
``{"schema": ..., "payload": ...}`` envelope) and ``_batch_id``; other columns pass through.

- ``op`` c (create) and r (snapshot read) -> insert of ``after``; u -> update of ``after`` whose
  old key is ``before``'s key (``after``'s when ``before`` is absent: an update that keeps its
  key, as REPLICA IDENTITY DEFAULT sends it); d -> delete of ``before``'s key; t (truncate) ->
  a truncate of the table. A tombstone (a null value, or a line ``null``) is a ``tombstone``
  (skipped: it carries no change). Any other op (m message) keeps its op as change type and a
  message that is not exactly one JSON value (text after it, invalid UTF-8) is ``unparseable``;
  both are quarantined as unknown change types.
- Values are decoded from Debezium's encodings (change_events.debezium.types: decimals as bytes,
  dates and times as epoch numbers, ISO texts) by the field's entry in the message's schema,
  else by the declared type and the source's ``debezium`` settings; a value that does not decode
  sets ``_landing_error`` to ``undecodable:<column>:<how>`` (old key columns:
  ``undecodable:old_<column>:<how>``), so the event is quarantined with that reason.
- A column of an image holding the connector's unavailable-value placeholder (an unchanged
  TOASTed value: the placeholder text, its bytes in base64, or a JSON array of it) is listed in
  ``unchanged_columns``: the event keeps that column's previous value (change_events.resolve).
- Images keep every attribute of ``after`` (decoded for the declared columns, as text for the
  others, numbers and booleans as their JSON text); a column absent from an image is null there.
  With ``undeclared``, the others are decoded into their exact text too, their unchanged-TOAST
  placeholders are listed in ``unchanged_columns``, and ``column_types`` gives each attribute's
  type by its schema entry (change_events.debezium.evolved_types; null without one).
- Position: event_ts = ``source.ts_ms`` (else the envelope's ``ts_ms``), event_seq =
  ``source.lsn`` (null when the connector has none), event_position = the connector family's
  position (change_events.debezium.positions; a known family's unreadable position sets
  ``_landing_error`` to ``invalid_position:<family>``).
- A primary-key change arrives as a delete of the old key and a create of the new key at the same
  position (ts_ms, lsn and event_position): both are kept as they came, and the resolver pairs
  them into one update from the old key to the new one, whichever batches they landed in, so
  created_at and unchanged TOASTed values follow the row (change_events.key_changes).
- ``source_message`` keeps the message's raw JSON.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_cdc.change_events.debezium import decode as debezium_decode
from spark_cdc.change_events.debezium.evolved_types import evolved_type_column
from spark_cdc.change_events.debezium.positions import position_columns
from spark_cdc.change_events.debezium.types import ARRAY_OF, LOGICAL_KINDS, DebeziumSettings
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import COLUMN_TYPES, LANDING_ERROR, UNCHANGED_COLUMNS
from spark_cdc.core.json_text import is_strict_json

_IMAGE = "map<string,string>"
_FIELD = (
    "struct<field: string, type: string, name: string, parameters: map<string,string>, "
    "items: struct<type: string, name: string>>"
)
_BODY = f"before {_IMAGE}, after {_IMAGE}, source map<string,string>, op string, ts_ms bigint"
_SCHEMA = f"struct<fields: array<struct<field: string, fields: array<{_FIELD}>>>>"
MESSAGE_SCHEMA = f"struct<schema: {_SCHEMA}, payload: struct<{_BODY}>, {_BODY}>"
OPS = {"c": "insert", "r": "insert", "u": "update", "d": "delete", "t": "truncate"}


def _whole(text: Column) -> Column:
    """A source field's integer (null unless its text is one)."""
    return F.when(F.trim(text).rlike(r"^-?[0-9]+$"), F.trim(text).try_cast("bigint"))


def _image_fields(envelope: Column, image: str) -> Column:
    """The schema's field list of ``image`` (before or after), null without a schema."""
    found = F.filter(envelope["fields"], lambda f: f["field"] == image)
    return F.transform(F.element_at(found, 1)["fields"], _named)


def _named(field: Column) -> Column:
    """A schema entry (field, type, name, parameters), an array's name from its elements'
    (debezium.types.array_name)."""
    items = field["items"]
    of_array = F.when(
        items["name"].isin(*LOGICAL_KINDS), F.concat(F.lit(ARRAY_OF), items["name"])
    ).when(items["name"].isNull() & (items["type"] == "bytes"), F.lit(ARRAY_OF + "bytes"))
    name = F.coalesce(field["name"], F.when(field["type"] == "array", of_array))
    return F.struct(
        field["field"].alias("field"),
        field["type"].alias("type"),
        name.alias("name"),
        field["parameters"].alias("parameters"),
    )


def _field(fields: Column, column: str) -> Column:
    return F.element_at(F.filter(fields, lambda f: f["field"] == column), 1)


def _column_plans(
    image: Column,
    fields: Column,
    schema: TargetSchema,
    columns,
    settings: DebeziumSettings,
    placeholders: tuple[str, ...] = (),
) -> Column:
    """Per column, in ``columns`` order, its decoding plan (debezium_decode.column_plan: its raw
    text and what decides its decoding), as one array; debezium_decode.decode_column decodes
    it."""
    plans = []
    for column in columns:
        raw = image[column]
        unchanged = (
            F.coalesce(raw.isin(*placeholders), F.lit(False)) if placeholders else F.lit(False)
        )
        field = _field(fields, column)
        plans.append(
            debezium_decode.column_plan(
                raw, field, schema.columns[column], settings, unchanged, column
            )
        )
    return F.array(*plans)


def normalize_debezium(
    messages: DataFrame,
    schema: TargetSchema,
    settings: DebeziumSettings | None = None,
    undeclared: bool = False,
) -> DataFrame:
    """Feed events (change_events.model columns, ``_batch_id``, ``source_message``,
    ``unchanged_columns``, ``_landing_error``). ``undeclared``: the image's other attributes
    are decoded too, as text columns (a source that evolves its columns), a value that does not
    decode setting ``undecodable:<name>:<how>``."""
    settings = settings or DebeziumSettings()
    passthrough = [c for c in messages.columns if c != "value"]
    value = F.col("value")
    tombstone = value.isNull() | (F.trim(value) == "null")
    strict = is_strict_json(value)
    # Only exact JSON is parsed (from_json of an empty text trips a Spark NullPointerException).
    parsed = F.from_json(F.when(strict & ~tombstone, value), MESSAGE_SCHEMA)
    fields = ("before", "after", "source", "op", "ts_ms")
    body = F.when(parsed["payload"].isNotNull(), parsed["payload"]).otherwise(
        F.struct(*(parsed[f].alias(f) for f in fields))
    )
    envelope = F.when(parsed["payload"].isNotNull(), parsed["schema"])
    staged = messages.select(
        *passthrough,
        value.alias("source_message"),
        body.alias("m"),
        strict.alias("_strict"),
        tombstone.alias("_tombstone"),
        _image_fields(envelope, "after").alias("_after_fields"),
        _image_fields(envelope, "before").alias("_before_fields"),
    )
    op = F.col("m.op")
    image = F.when(op.isin("c", "r", "u"), F.col("m.after"))
    old_image = F.when(op == "u", F.coalesce(F.col("m.before"), F.col("m.after"))).when(
        op == "d", F.col("m.before")
    )
    old_fields = F.when((op == "u") & F.col("m.before").isNull(), F.col("_after_fields")).otherwise(
        F.col("_before_fields")
    )
    declared = [c for c in schema.columns]
    planned = staged.select(
        "*",
        image.alias("_image"),
        old_image.alias("_old_image"),
        _column_plans(
            image, F.col("_after_fields"), schema, declared, settings, settings.placeholders()
        ).alias("_d_plans"),
        _column_plans(old_image, old_fields, schema, schema.keys, settings).alias("_o_plans"),
        _attribute_plans(
            image, F.col("_after_fields"), settings, undeclared, settings.placeholders()
        ).alias("_e_plans"),
    )
    decoded = planned.select(
        "*",
        debezium_decode.decode_column("_d_plans").alias("_d"),
        debezium_decode.decode_column("_o_plans").alias("_o"),
        debezium_decode.decode_column("_e_plans").alias("_e"),
    ).drop("_d_plans", "_o_plans", "_e_plans")
    return _events(decoded, passthrough, schema, undeclared)


def _attribute_plans(
    image: Column,
    fields: Column,
    settings: DebeziumSettings,
    undeclared: bool,
    placeholders: tuple[str, ...] = (),
) -> Column:
    """A decoding plan of every attribute of the image as a text column (empty unless
    ``undeclared``); a placeholder of an unchanged TOASTed value is marked unchanged."""
    if not undeclared:
        return F.array().cast(f"array<{debezium_decode.PLAN_TYPE}>")

    def unchanged(raw: Column) -> Column:
        return F.coalesce(raw.isin(*placeholders), F.lit(False)) if placeholders else F.lit(False)

    return F.transform(
        F.map_keys(image),
        lambda name: debezium_decode.column_plan(
            image[name], _field(fields, name), "string", settings, unchanged(image[name])
        ),
    )


def _evolved_types(names: Column) -> Column:
    """Per image attribute, the type its message's schema gives an evolved column (null
    without a schema entry; change_events.debezium.evolved_types)."""
    return F.transform(
        names, lambda name: evolved_type_column(_field(F.col("_after_fields"), name))
    )


def _events(
    decoded: DataFrame, passthrough: list[str], schema: TargetSchema, undeclared: bool
) -> DataFrame:
    op = F.col("m.op")
    kind = F.when(F.col("_tombstone"), F.lit("tombstone")).when(
        ~F.col("_strict") | F.col("m").isNull() | op.isNull(), F.lit("unparseable")
    )
    for code, change in OPS.items():
        kind = kind.when(op == code, F.lit(change))
    kind = kind.otherwise(op)
    names = F.map_keys(F.col("_image"))
    declared, keys = list(schema.columns), list(schema.keys)

    def entry(part: str, column: str) -> Column:
        return F.element_at(F.col(part), (declared if part == "_d" else keys).index(column) + 1)

    text_of = {c: entry("_d", c)["text"] for c in declared}

    def value_of(name: Column, index: Column) -> Column:
        chosen = F.when(F.lit(False), F.lit(None).cast("string"))
        for column, text in text_of.items():
            chosen = chosen.when(name == column, text)
        if undeclared:
            return chosen.otherwise(F.element_at(F.col("_e"), index + 1)["text"])
        return chosen.otherwise(F.col("_image")[name])

    def failed(part: str, column: str) -> Column:
        found = entry(part, column)
        return found["raw"].isNotNull() & ~found["unchanged"] & found["text"].isNull()

    def failed_attribute(found: Column, index: Column) -> Column:
        name = F.element_at(names, index + 1)
        bad = found["raw"].isNotNull() & found["text"].isNull() & ~name.isin(*declared)
        return F.when(bad, F.concat(F.lit("undecodable:"), name, F.lit(":"), found["how"]))

    attribute_errors = F.filter(F.transform(F.col("_e"), failed_attribute), lambda e: e.isNotNull())
    errors = (
        [
            F.when(failed("_d", c), F.concat(F.lit(f"undecodable:{c}:"), entry("_d", c)["how"]))
            for c in declared
        ]
        + [F.element_at(attribute_errors, 1)]
        + [
            F.when(failed("_o", k), F.concat(F.lit(f"undecodable:old_{k}:"), entry("_o", k)["how"]))
            for k in keys
        ]
    )
    unchanged = F.filter(
        F.array(*(F.when(entry("_d", c)["unchanged"], F.lit(c)) for c in schema.nonkeys)),
        lambda c: c.isNotNull(),
    )
    if undeclared:  # the evolved attributes' placeholders too
        evolved = F.transform(
            F.col("_e"),
            lambda found, index: F.when(
                found["unchanged"] & ~F.element_at(names, index + 1).isin(*declared),
                F.element_at(names, index + 1),
            ),
        )
        unchanged = F.concat(unchanged, F.filter(evolved, lambda c: c.isNotNull()))
    has_old = F.col("_old_image").isNotNull()
    source = F.col("m.source")
    position, position_error = position_columns(source)
    return decoded.select(
        *passthrough,
        "source_message",
        kind.alias("change_type"),
        F.timestamp_millis(F.coalesce(_whole(source["ts_ms"]), F.col("m.ts_ms"))).alias("event_ts"),
        _whole(source["lsn"]).alias("event_seq"),
        position.alias("event_position"),
        names.alias("column_names"),
        F.transform(names, value_of).alias("column_values"),
        *([_evolved_types(names).alias(COLUMN_TYPES)] if undeclared else []),
        F.when(has_old, F.array(*(F.lit(k) for k in schema.keys))).alias("old_key_names"),
        F.when(has_old, F.array(*(entry("_o", k)["text"] for k in keys))).alias("old_key_values"),
        F.when(F.col("_image").isNotNull() & (F.size(unchanged) > 0), unchanged).alias(
            UNCHANGED_COLUMNS
        ),
        F.when(kind.isin("insert", "update", "delete"), F.coalesce(position_error, *errors))
        .when(kind == "truncate", position_error)
        .alias(LANDING_ERROR),
        op.alias("_op"),
    )
