"""change_events.debezium.types in Spark: one image value decoded into the text its target type
casts from, null when it does not decode or its declared type cannot hold it exactly (the
caller turns that into a quarantine reason).

The field's kind is chosen per message (its schema envelope may name a logical type) and per
declared column (its type, the source's settings and ``column.logical.types``), as
debezium.types.field_kind does; every kind's decoding is a Spark expression (no Python worker).
"""

from __future__ import annotations

from pyspark import SparkContext
from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_cdc.change_events.debezium import values
from spark_cdc.change_events.debezium.settings import DebeziumSettings
from spark_cdc.change_events.debezium.types import (
    ARRAY_OF,
    BYTES_KINDS,
    DATE_KINDS,
    DECIMAL_KINDS,
    HOLDS,
    LOGICAL_KINDS,
    OR_ISO,
    TIME_KINDS,
    TIMESTAMP_KINDS,
    declared_scale,
    field_kind,
    string_binary_kind,
    type_class,
)

_INTEGER = r"^-?[0-9]+$"
_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_BASE64_URL = r"^[A-Za-z0-9_-]*={0,2}$"
_HEX = r"^(?:[0-9A-Fa-f]{2})*$"
_DECIMAL_TEXT = r"^(-?[0-9]+)(?:\.([0-9]+))?$"
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


def _base64(raw: Column) -> Column:
    """Standard base64 on one line (Spark's base64 breaks lines every 76 characters)."""
    return F.regexp_replace(F.base64(raw), "[\r\n]", "")


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
    """values.decimal_text: ``unscaled`` * 10^-``scale`` as plain text."""
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


def _fit_scale(text: Column, scale: Column) -> Column:
    """values.fit_scale: at most ``scale`` places, the dropped ones zeros (else null)."""
    whole = F.regexp_extract(text, _DECIMAL_TEXT, 1)
    fraction = F.regexp_extract(text, _DECIMAL_TEXT, 2)
    extra = F.substring(fraction, (scale + 1).cast("int"), 100_000)
    kept = F.substring(fraction, 1, scale.cast("int"))
    fitted = F.concat(whole, F.when(kept != "", F.concat(F.lit("."), kept)).otherwise(F.lit("")))
    return F.when(text.rlike(_DECIMAL_TEXT) & (F.regexp_replace(extra, "0", "") == ""), fitted)


def _timestamp_text(micros: Column) -> Column:
    return let(micros, _in_range_timestamp_text)


def _in_range_timestamp_text(micros: Column) -> Column:
    in_range = micros.between(F.lit(values.MIN_MICROS), F.lit(values.MAX_MICROS))
    return F.when(in_range, F.date_format(F.timestamp_micros(micros), _TIMESTAMP_FORMAT))


def _time_text(micros: Column) -> Column:
    return let(micros, _in_range_time_text)


def _div(value: Column, by: int) -> Column:
    """The integer quotient of a non-negative bigint (exact: decimal arithmetic)."""
    return F.floor(value.cast("decimal(20,0)") / F.lit(by)).cast("bigint")


def _in_range_time_text(micros: Column) -> Column:
    size = F.abs(micros)
    seconds = _div(size, 1_000_000)
    parts = [
        let(
            _div(seconds, 3600).cast("string"),
            lambda h: F.lpad(h, F.greatest(F.length(h), F.lit(2)), "0"),
        ),
        F.lpad((_div(seconds, 60) % 60).cast("string"), 2, "0"),
        F.lpad((seconds % 60).cast("string"), 2, "0"),
    ]
    text = F.concat(
        F.when(micros < 0, F.lit("-")).otherwise(F.lit("")),
        F.concat_ws(":", *parts),
        F.lit("."),
        F.lpad((size % 1_000_000).cast("string"), 6, "0"),
    )
    return F.when(size <= F.lit(values.MAX_TIME_MICROS), text)


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


def _family_decimal(text: Column, kind: Column, scale: Column, plan: Column) -> Column:
    """decimal and variable_decimal (an object ``{scale, value}`` whatever the kind says),
    fitted to the declared scale (0 for an integral column)."""
    variable = (kind == "variable_decimal") | text.startswith("{")
    parsed = F.from_json(F.when(variable, text), "struct<scale: string, value: string>")
    inner = parsed["scale"]
    own_scale = F.when(inner.rlike(_INTEGER), inner.try_cast("int"))
    number = decimal_text(
        _unscaled(F.when(variable, parsed["value"]).otherwise(text)),
        F.when(variable, own_scale).otherwise(scale),
    )
    target = plan["target"]
    places = F.when(target == "decimal", plan["scale"]).when(target == "integral", F.lit(0))
    return let(
        F.struct(number.alias("n"), places.alias("p")),
        lambda v: F.when(v["p"].isNotNull(), _fit_scale(v["n"], v["p"])).otherwise(v["n"]),
    )


def _family_date(text: Column, kind: Column, plan: Column) -> Column:
    days = _integer(text)
    in_range = days.between(F.lit(values.MIN_DAYS), F.lit(values.MAX_DAYS))
    day = F.date_add(F.lit("1970-01-01").cast("date"), F.when(in_range, days).cast("int"))
    iso = F.when(text.rlike(_ISO_DATE), F.regexp_extract(text, _ISO_DATE, 1))
    found = F.when(kind == "days", F.date_format(day, "yyyy-MM-dd")).otherwise(iso)
    midnight = F.concat(found, F.lit(values.MIDNIGHT))
    return F.when(plan["target"] == "timestamp", midnight).otherwise(found)


def _epoch_micros(text: Column, kind: Column) -> Column:
    """The microseconds of an epoch_* / time_* kind's integer (null when not exact): integer
    arithmetic only."""
    value = _integer(text)
    whole = value % 1000 == 0
    nanos = F.when(whole, F.when(value >= 0, _div(value, 1000)).otherwise(-_div(-value, 1000)))
    return (
        F.when(kind.endswith("_millis"), F.try_multiply(value, F.lit(1000)))
        .when(kind.endswith("_micros"), value)
        .otherwise(nanos)
    )


def _family_timestamp(text: Column, kind: Column) -> Column:
    return F.when(kind.isin("iso_timestamp", "zoned_timestamp"), _iso_timestamp(text)).otherwise(
        _timestamp_text(_epoch_micros(text, kind))
    )


def _family_time(text: Column, kind: Column) -> Column:
    iso = F.when(text.rlike(_ISO_TIME), F.regexp_extract(text, _ISO_TIME, 1))
    return F.when(kind == "iso_time", iso).otherwise(_time_text(_epoch_micros(text, kind)))


def _family_bytes(text: Column, kind: Column, plan: Column) -> Column:
    """values.bytes_of: the bytes as standard base64 (a binary column), the text as sent after
    checking it (a string column)."""
    unpadded = F.regexp_replace(text, "=+$", "")
    url = F.translate(unpadded, "-_", "+/")
    url = F.concat(url, F.repeat(F.lit("="), ((-F.length(url)) % 4 + 4) % 4))
    url_valid = text.rlike(_BASE64_URL) & (F.length(unpadded) % 4 != 1)
    standard = F.when(kind == "bytes_url", F.when(url_valid, url)).when(
        kind == "bytes", F.when(text.rlike(_BASE64), text)
    )
    raw = F.when(kind == "bytes_hex", F.when(text.rlike(_HEX), F.unhex(text))).otherwise(
        F.when(standard.rlike(_BASE64), F.unbase64(standard))
    )
    as_sent = plan["target"] == "string"
    return F.when(raw.isNotNull(), F.when(as_sent, text).otherwise(_base64(raw)))


def _family_bits(text: Column, length: Column, plan: Column) -> Column:
    """values.bits_bytes / bits_number / bits_text: little-endian bytes to the database's
    big-endian value."""
    hexed = F.hex(F.when(text.rlike(_BASE64), F.unbase64(text)))
    big_endian = F.array_join(F.reverse(F.regexp_extract_all(hexed, F.lit("(..)"), 1)), "")
    digits = F.regexp_replace(big_endian, "^0+", "")
    size = F.coalesce(F.floor((length + 7) / 8).cast("int"), (F.length(hexed) / 2).cast("int"))
    width = F.coalesce(length, size * 8)
    fits = F.length(digits) <= size * 2
    small = F.length(digits) <= 16  # at most 64 bits
    nonzero = F.when(digits == "", F.lit("0")).otherwise(digits)
    binary = F.conv(nonzero, 16, 2)
    bit_length = F.when(digits == "", F.lit(0)).otherwise(F.length(binary))
    target = plan["target"]
    decoded = (
        F.when(target == "binary", _base64(F.unhex(F.lpad(digits, size * 2, "0"))))
        .when(target == "integral", F.when(small, F.conv(nonzero, 16, 10)))
        .otherwise(
            F.when(
                small & (bit_length <= width),
                F.lpad(binary, F.greatest(width, F.length(binary)), "0"),
            )
        )
    )
    valid = hexed.isNotNull() & fits & F.coalesce(length >= 0, F.lit(True))
    return F.when(valid, decoded)


# What a column's declared type fixes for its decoding, as values (decode_column).
PLAN_TYPE = (
    "struct<raw: string, field: struct<field: string, type: string, name: string, "
    "parameters: map<string,string>>, fallback: string, allowed: array<string>, "
    "target: string, type: string, binary: string, scale: int, how: string, unchanged: boolean>"
)


def column_plan(
    raw: Column,
    field: Column,
    spark_type: str,
    settings: DebeziumSettings,
    unchanged: Column,
    column: str = "",
) -> Column:
    """One column's value with what its declared type fixes for decoding (decode_column)."""
    fallback, fallback_how = field_kind(None, spark_type, settings)
    target = type_class(spark_type)
    allowed = ["text", "epoch_unknown", *(k for k, held in HOLDS.items() if target in held)]
    logical = settings.logical_type(column)
    if logical is not None:
        empty = field.isNull() | (field["name"].isNull() & field["type"].isNull())
        named = F.struct(
            F.lit(column).alias("field"),
            F.lit(None).cast("string").alias("type"),
            F.lit(logical).alias("name"),
            F.lit(None).cast("map<string,string>").alias("parameters"),
        )
        field = F.when(empty, named).otherwise(field)
    return F.struct(
        raw.alias("raw"),
        field.alias("field"),
        F.lit(fallback).alias("fallback"),
        F.array(*(F.lit(k) for k in allowed)).cast("array<string>").alias("allowed"),
        F.lit(target).alias("target"),
        F.lit(spark_type).alias("type"),
        F.lit(string_binary_kind(settings)).alias("binary"),
        F.lit(declared_scale(spark_type)).cast("int").alias("scale"),
        F.lit(fallback_how).alias("how"),
        unchanged.alias("unchanged"),
    ).cast(PLAN_TYPE)


def _schema_kind(field: Column, plan: Column) -> tuple[Column, Column]:
    """(kind, how) from the message's schema entry (null without one): a logical name, a bytes
    field, or another type (text; a binary column's by binary.handling.mode)."""
    arrayed = field["name"].startswith(ARRAY_OF)
    named = F.array_contains(F.array(*(F.lit(n) for n in LOGICAL_KINDS)), field["name"])
    logical = named | arrayed
    binary = plan["target"] == "binary"
    kind = F.when(arrayed, F.lit("refused"))
    for name, found in LOGICAL_KINDS.items():
        kind = kind.when(field["name"] == name, F.lit(found))
    kind = kind.when(field["type"] == "bytes", F.lit("bytes")).when(
        field["type"].isNotNull(), F.when(binary, plan["binary"]).otherwise(F.lit("text"))
    )
    how = (
        F.when(logical, field["name"])
        .when(field["type"] == "bytes", F.lit("bytes"))
        .when(field["type"].isNotNull() & binary, F.lit("binary.handling.mode"))
        .when(field["type"].isNotNull(), field["type"])
    )
    return kind, how


def _decode_planned(plan: Column) -> Column:
    """One column_plan decoded: the kind from the message's schema else from the declared type
    and settings (an ``_or_iso`` fallback picks the epoch kind for an integer text, ISO
    otherwise); a kind the declared type cannot hold is refused; then the kind's family decodes
    the text (an unchanged-TOAST placeholder stays as it is). The kind and what the families
    share are computed once (``let``): each family reads them by reference."""
    field = plan["field"]
    parameters = field["parameters"]
    scale = F.coalesce(
        F.when(parameters["scale"].rlike(_INTEGER), parameters["scale"].try_cast("int")),
        plan["scale"],
    )
    length = F.when(parameters["length"].rlike(_INTEGER), parameters["length"].try_cast("int"))
    schema_kind, schema_how = _schema_kind(field, plan)
    kind = F.coalesce(schema_kind, plan["fallback"])
    to_string = (kind == "zoned_timestamp") & (plan["target"] == "string")
    kind = F.when(to_string, F.lit("text")).otherwise(kind)
    staged = F.struct(
        plan.alias("plan"),
        kind.alias("kind"),
        F.coalesce(schema_how, plan["how"]).alias("how"),
        scale.alias("scale"),
        length.alias("length"),
    )
    return let(staged, _decode_staged)


def _decode_staged(staged: Column) -> Column:
    """The staged kind resolved (its fallback by the value's shape) and checked against what
    the declared type holds."""
    plan = staged["plan"]
    text = plan["raw"]
    named = staged["kind"]
    base = named
    for fallback, epoch in OR_ISO.items():
        base = F.when(named == fallback, F.lit(epoch)).otherwise(base)
    refused = ~F.array_contains(plan["allowed"], base)
    # a fallback epoch kind: an integer is the epoch, anything else ISO
    kind = F.when(
        named.isin(*OR_ISO), F.when(text.rlike(_INTEGER), base).otherwise(F.lit("iso_timestamp"))
    ).otherwise(named)
    return let(
        F.struct(staged.alias("s"), kind.alias("kind"), refused.alias("refused")),
        lambda v: _decoded(v["s"]["plan"], v["kind"], v["refused"], v["s"]),
    )


def _decoded(plan: Column, kind: Column, refused: Column, staged: Column) -> Column:
    """The value decoded by its kind's family (text, reason, whether unchanged)."""
    text, field, target = plan["raw"], plan["field"], plan["target"]
    # a plain decimal text into a decimal column: its places fitted (never rounded by the cast)
    plain_decimal = (target == "decimal") & text.rlike(_DECIMAL_TEXT)
    text_value = (
        F.when(target == "binary", _base64(F.encode(text, "UTF-8")))
        .when(plain_decimal, _fit_scale(text, plan["scale"]))
        .otherwise(text)
    )
    families = (
        (DECIMAL_KINDS, lambda: _family_decimal(text, kind, staged["scale"], plan)),
        (DATE_KINDS, lambda: _family_date(text, kind, plan)),
        ((*TIMESTAMP_KINDS, "zoned_timestamp"), lambda: _family_timestamp(text, kind)),
        (TIME_KINDS, lambda: _family_time(text, kind)),
        (BYTES_KINDS, lambda: _family_bytes(text, kind, plan)),
        (("bits",), lambda: _family_bits(text, staged["length"], plan)),
    )
    decoded = F.when(kind == "text", text_value)
    for members, family in families:
        decoded = decoded.when(kind.isin(*members), family())
    decoded = F.when(refused, F.lit(None).cast("string")).otherwise(decoded)
    decoded = F.when(plan["unchanged"], text).otherwise(decoded)
    reason = F.when(refused, F.concat(staged["how"], F.lit(" into "), plan["type"])).otherwise(
        F.coalesce(field["name"], field["type"], plan["how"])
    )
    return F.struct(
        text.alias("raw"),
        decoded.alias("text"),
        reason.alias("how"),
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
