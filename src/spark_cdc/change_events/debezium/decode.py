"""change_events.debezium.types in Spark: one image value decoded into the text its target type
casts from, null when it does not decode (the caller turns that into a quarantine reason).

The field's kind is chosen per message (its schema envelope may name a logical type) and per
declared column (its type and the source's settings), as debezium_types.field_kind does; every
kind's decoding is a Spark expression (no Python worker).
"""

from __future__ import annotations

from pyspark import SparkContext
from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_cdc.change_events.debezium.types import (
    DAY_MICROS,
    LOGICAL_KINDS,
    MAX_DAYS,
    MAX_MICROS,
    MIN_DAYS,
    MIN_MICROS,
    TIMESTAMP_TYPES,
    DebeziumSettings,
    declared_scale,
    field_kind,
    kinds_for,
)

_INTEGER = r"^-?[0-9]+$"
_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_ISO_TIMESTAMP = (
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?$"
)
_ISO_DATE = r"^([0-9]{4}-[0-9]{2}-[0-9]{2})Z?$"
_ISO_TIME = r"^([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)(?:Z|[+-][0-9]{2}:[0-9]{2})?$"
_TIMESTAMP_FORMAT = "yyyy-MM-dd HH:mm:ss.SSSSSS"


def let(value: Column, body) -> Column:
    """``body(value)`` with ``value`` evaluated once (a one-element array's transform): the
    decoders read their intermediate values several times, and an expression tree that repeats
    them grows with each use."""
    return F.element_at(F.transform(F.array(value), body), 1)


def _integer(text: Column) -> Column:
    return F.when(text.rlike(_INTEGER), text.try_cast("bigint"))


def _unscaled(text: Column) -> Column:
    """The signed value of base64 two's-complement big-endian bytes, as decimal(38,0): the last
    8 bytes unsigned plus the bytes before them, sign-extended, times 2^64 (``conv`` reads up to
    64 bits, as an unsigned number)."""
    valid = text.rlike(_BASE64) & (F.length(text) > 0)
    return let(F.hex(F.when(valid, F.unbase64(text))), _hex_value)


def _hex_value(hexed: Column) -> Column:
    digits = F.length(hexed)
    low_digits = F.least(digits, F.lit(16))
    high_digits = digits - low_digits
    low_hex = F.substring(hexed, (high_digits + 1).cast("int"), 16)
    high_hex = F.when(high_digits > 0, F.substring(hexed, 1, high_digits.cast("int")))
    # the top bit of the first byte is the sign
    top = F.conv(F.substring(hexed, 1, 2), 16, 10).cast("int")
    negative = top >= 128
    low = F.conv(low_hex, 16, 10).cast("decimal(38,0)")
    high = F.conv(high_hex, 16, 10).cast("decimal(38,0)")
    two_64 = F.lit("18446744073709551616").cast("decimal(38,0)")
    # a negative number of n bytes is its unsigned reading minus 2^(8n)
    high_span = F.pow(F.lit(16), high_digits).cast("decimal(38,0)")
    low_span = F.pow(F.lit(16), low_digits).cast("decimal(38,0)")
    unsigned_high = F.coalesce(high, F.lit(0).cast("decimal(38,0)"))
    signed_high = F.when(
        high_digits > 0,
        F.when(negative, unsigned_high - high_span).otherwise(unsigned_high),
    )
    short = F.when(negative, low - low_span).otherwise(low)
    value = F.when(high_digits > 0, F.try_add(F.try_multiply(signed_high, two_64), low)).otherwise(
        short
    )
    return F.when(digits >= 2, value.cast("decimal(38,0)"))


def decimal_text(unscaled: Column, scale: Column) -> Column:
    """debezium_types.decimal_text: ``unscaled`` * 10^-``scale`` as plain text."""
    return let(
        F.struct(unscaled.alias("u"), scale.alias("s")),
        lambda v: _decimal_text(v["u"], v["s"]),
    )


def _decimal_text(unscaled: Column, scale: Column) -> Column:
    sign = F.when(unscaled < 0, F.lit("-")).otherwise(F.lit(""))
    digits = F.abs(unscaled).cast("string")
    padded = F.lpad(digits, F.greatest(scale + 1, F.length(digits)).cast("int"), "0")
    cut = F.length(padded) - scale
    fraction = F.concat(F.substring(padded, 1, cut), F.lit("."), F.substring(padded, cut + 1, 64))
    whole = F.when(unscaled == 0, F.lit("0")).otherwise(
        F.concat(digits, F.repeat(F.lit("0"), (-scale).cast("int")))
    )
    return F.when(
        unscaled.isNotNull() & scale.isNotNull(),
        F.concat(sign, F.when(scale > 0, fraction).otherwise(whole)),
    )


def _timestamp_text(micros: Column) -> Column:
    return let(micros, _in_range_timestamp_text)


def _in_range_timestamp_text(micros: Column) -> Column:
    in_range = micros.between(F.lit(MIN_MICROS), F.lit(MAX_MICROS))
    return F.when(in_range, F.date_format(F.timestamp_micros(micros), _TIMESTAMP_FORMAT))


def _time_text(micros: Column) -> Column:
    return let(micros, _in_range_time_text)


def _in_range_time_text(micros: Column) -> Column:
    seconds = F.floor(micros / 1_000_000)
    parts = [
        F.lpad(F.floor(seconds / 3600).cast("string"), 2, "0"),
        F.lpad(F.floor(seconds / 60 % 60).cast("string"), 2, "0"),
        F.lpad((seconds % 60).cast("string"), 2, "0"),
    ]
    text = F.concat(
        F.concat_ws(":", *parts), F.lit("."), F.lpad((micros % 1_000_000).cast("string"), 6, "0")
    )
    return F.when(micros.between(F.lit(0), F.lit(DAY_MICROS)), text)


def _iso_timestamp(text: Column) -> Column:
    return let(F.when(text.rlike(_ISO_TIMESTAMP), text), _iso_instant)


def _iso_instant(text: Column) -> Column:
    """The UTC text of an ISO timestamp (already matched) or null."""
    fraction = F.rpad(F.regexp_extract(text, _ISO_TIMESTAMP, 3), 9, "0")
    offset = F.regexp_extract(text, _ISO_TIMESTAMP, 4)
    local = F.concat(
        F.regexp_extract(text, _ISO_TIMESTAMP, 1),
        F.lit(" "),
        F.regexp_extract(text, _ISO_TIMESTAMP, 2),
        F.lit("."),
        F.substring(fraction, 1, 6),
    )
    moment = F.try_to_timestamp(local, F.lit(_TIMESTAMP_FORMAT))
    shift = F.when(offset.isin("", "Z"), F.lit(0)).otherwise(
        F.when(F.substring(offset, 1, 1) == "+", 1).otherwise(-1)
        * (
            F.substring(offset, 2, 2).cast("int") * 3600
            + F.substring(offset, 5, 2).cast("int") * 60
        )
    )
    micros = F.try_subtract(F.unix_micros(moment), shift.cast("bigint") * 1_000_000)
    exact = F.substring(fraction, 7, 3) == "000"
    return F.when(text.isNotNull() & exact, _timestamp_text(micros))


def _family_decimal(text: Column, kind: Column, scale: Column) -> Column:
    """decimal and variable_decimal (an object ``{scale, value}`` whatever the kind says)."""
    variable = (kind == "variable_decimal") | text.startswith("{")
    parsed = F.from_json(F.when(variable, text), "struct<scale: string, value: string>")
    inner = parsed["scale"]
    own_scale = F.when(inner.rlike(_INTEGER), inner.try_cast("int"))
    return decimal_text(
        _unscaled(F.when(variable, parsed["value"]).otherwise(text)),
        F.when(variable, own_scale).otherwise(scale),
    )


def _family_date(text: Column, kind: Column) -> Column:
    days = _integer(text)
    in_range = days.between(F.lit(MIN_DAYS), F.lit(MAX_DAYS))
    day = F.date_add(F.lit("1970-01-01").cast("date"), F.when(in_range, days).cast("int"))
    iso = F.when(text.rlike(_ISO_DATE), F.regexp_extract(text, _ISO_DATE, 1))
    return F.when(kind == "days", F.date_format(day, "yyyy-MM-dd")).otherwise(iso)


def _epoch_micros(text: Column, kind: Column) -> Column:
    """The microseconds of an epoch_* / time_* kind's integer (null when not exact)."""
    value = _integer(text)
    return (
        F.when(kind.endswith("_millis"), F.try_multiply(value, F.lit(1000)))
        .when(kind.endswith("_micros"), value)
        .when(value % 1000 == 0, F.floor(value / 1000))
    )


def _family_timestamp(text: Column, kind: Column) -> Column:
    return F.when(kind == "iso_timestamp", _iso_timestamp(text)).otherwise(
        _timestamp_text(_epoch_micros(text, kind))
    )


def _family_time(text: Column, kind: Column) -> Column:
    iso = F.when(text.rlike(_ISO_TIME), F.regexp_extract(text, _ISO_TIME, 1))
    return F.when(kind == "iso_time", iso).otherwise(_time_text(_epoch_micros(text, kind)))


# What a column's declared type fixes for its decoding, as values (decode_column).
_PLAN_TYPE = (
    "struct<raw: string, field: struct<field: string, type: string, name: string, "
    "parameters: map<string,string>>, fallback: string, allowed: array<string>, "
    "to_timestamp: boolean, scale: int, how: string, unchanged: boolean>"
)


def column_plan(
    raw: Column, field: Column, spark_type: str, settings: DebeziumSettings, unchanged: Column
) -> Column:
    """One column's value with what its declared type fixes for decoding (decode_column)."""
    fallback, fallback_how = field_kind(None, spark_type, settings)
    return F.struct(
        raw.alias("raw"),
        field.alias("field"),
        F.lit(fallback).alias("fallback"),
        F.array(*(F.lit(k) for k in kinds_for(spark_type))).cast("array<string>").alias("allowed"),
        F.lit(spark_type in TIMESTAMP_TYPES).alias("to_timestamp"),
        F.lit(declared_scale(spark_type)).cast("int").alias("scale"),
        F.lit(fallback_how).alias("how"),
        unchanged.alias("unchanged"),
    ).cast(_PLAN_TYPE)


def _schema_kind_of(field: Column, to_timestamp: Column) -> Column:
    kind = F.when(F.lit(False), F.lit(None).cast("string"))
    for name, found in LOGICAL_KINDS.items():
        if found == "zoned_timestamp":
            kind = kind.when(
                field["name"] == name,
                F.when(to_timestamp, F.lit("iso_timestamp")).otherwise(F.lit("text")),
            )
        else:
            kind = kind.when(field["name"] == name, F.lit(found))
    return kind.when(field["type"] == "bytes", F.lit("bytes")).when(
        field["type"].isNotNull(), F.lit("text")
    )


def _decode_planned(plan: Column) -> Column:
    """One column_plan decoded: the kind from the message's schema (its logical type, or bytes)
    else from the declared type and settings (the plan's fallback; an ``_or_iso`` fallback picks
    the epoch kind for an integer text, ISO otherwise), kept only when the declared type can
    hold it; then the kind's family decodes the text (an unchanged-TOAST placeholder stays as
    it is)."""
    text, field = plan["raw"], plan["field"]
    from_schema = field["parameters"]["scale"]
    scale = F.coalesce(
        F.when(from_schema.rlike(_INTEGER), from_schema.try_cast("int")), plan["scale"]
    )
    fallback = plan["fallback"]
    epoch = F.regexp_replace(fallback, "_or_iso$", "")
    fallback_kind = F.when(
        fallback.endswith("_or_iso"),
        F.when(text.rlike(_INTEGER), epoch).otherwise(F.lit("iso_timestamp")),
    ).otherwise(fallback)
    kind = F.coalesce(_schema_kind_of(field, plan["to_timestamp"]), fallback_kind)
    kind = F.when(F.array_contains(plan["allowed"], kind), kind).otherwise(F.lit("text"))
    families = (
        (("decimal", "variable_decimal"), _family_decimal(text, kind, scale)),
        (("days", "iso_date"), _family_date(text, kind)),
        (("epoch_millis", "epoch_micros", "epoch_nanos", "iso_timestamp"), None),
        (("time_millis", "time_micros", "time_nanos", "iso_time"), None),
    )
    decoded = F.when(F.lit(False), F.lit(None).cast("string"))
    for members, family in families:
        if family is None:
            family = (
                _family_timestamp(text, kind)
                if "iso_timestamp" in members
                else _family_time(text, kind)
            )
        decoded = decoded.when(kind.isin(*members), family)
    decoded = F.when(plan["unchanged"], text).otherwise(decoded.otherwise(text))
    how = F.coalesce(field["name"], field["type"], plan["how"])
    return F.struct(
        text.alias("raw"),
        decoded.alias("text"),
        how.alias("how"),
        plan["unchanged"].alias("unchanged"),
    )


_DECODERS: dict[tuple[str, int], Column] = {}


def decode_column(name: str) -> Column:
    """_decode_planned of every column_plan in the array column ``name``, as one array of
    structs (raw, text, how, unchanged): the decoding expression appears once, however many
    columns there are. It is built once per process and gateway (a few thousand calls into
    the JVM) and reused: it names its input, nothing else."""
    context = SparkContext._active_spark_context
    key = (name, id(getattr(context, "_jvm", None)))
    if key not in _DECODERS:
        _DECODERS[key] = F.transform(F.col(name), _decode_planned)
    return _DECODERS[key]
