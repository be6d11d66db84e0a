"""Debezium's value encodings: each value's kind, what each declared type can hold, and the text
it is decoded into (plain Python: the written semantics change_events.debezium.decode computes
in Spark).

A value of an image arrives as JSON; Spark reads each attribute of ``before``/``after`` as text
(a string as it is, a number or boolean as written, an object or array as its JSON text). Its
*kind* comes from the field's entry in the message's schema envelope when there is one (its
logical ``name``, its ``type`` and ``parameters``), else from the source's setting
``column.logical.types`` (a logical name per column), else from the declared Spark type and the
source's connector settings (``DebeziumSettings``: ``decimal.handling.mode``,
``time.precision.mode``, ``binary.handling.mode``). The envelope wins: a message that carries a
schema decodes the same whatever the settings say.

Each (kind, declared type) pair either converts exactly or is refused (``Undecodable``: the
event is quarantined ``undecodable:<column>:<kind> into <type>``); docs/change-events.md has the
table:

- decimal (Decimal, VariableScaleDecimal): into decimal(p,s) when the places beyond s are
  zeros, into an integral type when there is no fraction, into a string as its text;
- days (Date), iso_date (IsoDate): into a date, a timestamp (its midnight), a string;
- epoch_millis/micros/nanos (Timestamp, MicroTimestamp, NanoTimestamp), iso_timestamp: into a
  timestamp or a string (``yyyy-MM-dd HH:mm:ss.SSSSSS``);
- zoned_timestamp (ZonedTimestamp): into a timestamp (its UTC instant), a string (as sent);
- time_millis/micros/nanos (Time, MicroTime, NanoTime), iso_time: into a string only
  (``[-]HH:mm:ss.SSSSSS``, MySQL's TIME range);
- bytes (a bytes field, or binary.handling.mode): into binary (the bytes), a string (as sent);
- bits (Bits): into binary (big-endian bytes), an integral type (the unsigned number), a string
  (the n binary digits);
- refused into every type: MicroDuration (an interval in microseconds, its months approximated:
  ``interval.handling.mode=string`` sends the exact ISO text) and an array of an encoded kind
  (``array of <name>``, array_name: its elements epoch numbers, base64 bytes);
- text (anything else: strings, numbers, booleans, Json, Uuid, Enum, EnumSet, Year): the cast
  decides, but a plain decimal text into decimal(p,s) is fitted as a decimal is (places beyond
  s must be zeros), and a binary column takes the text's UTF-8 bytes.

A binary column's text is base64 (normalize casts it back to bytes). Without a schema, an epoch
number for a timestamp column under ``time.precision.mode`` adaptive (milliseconds or
microseconds by the column's precision, which the message does not carry) is refused unless
``column.logical.types`` names the column's logical type; ISO texts decode whatever the mode.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass

from spark_cdc.change_events.debezium import values
from spark_cdc.change_events.debezium.settings import (
    DEFAULT_PLACEHOLDER,
    DebeziumSettings,
)
from spark_cdc.change_events.debezium.values import Undecodable

__all__ = ["DEFAULT_PLACEHOLDER", "DebeziumSettings", "FieldSchema", "Undecodable", "decode"]

_DECIMAL_TYPE = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
INTEGRAL_TYPES = ("tinyint", "byte", "smallint", "short", "int", "integer", "bigint", "long")
TIMESTAMP_TYPES = ("timestamp", "timestamp_ntz", "timestamp_ltz")

# Logical names (the schema's ``name``) -> kind.
LOGICAL_KINDS = {
    "org.apache.kafka.connect.data.Decimal": "decimal",
    "io.debezium.data.VariableScaleDecimal": "variable_decimal",
    "io.debezium.time.Date": "days",
    "org.apache.kafka.connect.data.Date": "days",
    "io.debezium.time.Time": "time_millis",
    "org.apache.kafka.connect.data.Time": "time_millis",
    "io.debezium.time.MicroTime": "time_micros",
    "io.debezium.time.NanoTime": "time_nanos",
    "io.debezium.time.Timestamp": "epoch_millis",
    "org.apache.kafka.connect.data.Timestamp": "epoch_millis",
    "io.debezium.time.MicroTimestamp": "epoch_micros",
    "io.debezium.time.NanoTimestamp": "epoch_nanos",
    "io.debezium.time.ZonedTimestamp": "zoned_timestamp",
    "io.debezium.time.IsoTimestamp": "iso_timestamp",
    "io.debezium.time.IsoDate": "iso_date",
    "io.debezium.time.IsoTime": "iso_time",
    "io.debezium.data.Bits": "bits",
    # months approximated as 30.4375 days: the interval Postgres holds cannot be told back
    "io.debezium.time.MicroDuration": "refused",
}
# An array's schema names its elements' logical type in ``items``; an array of an encoded kind
# is named ``array of <name>`` (``array of bytes`` for bytes): its elements arrive encoded
# (epoch numbers, base64), so no declared type holds its JSON text as the database's values.
ARRAY_OF = "array of "
DECIMAL_KINDS = ("decimal", "variable_decimal")
DATE_KINDS = ("days", "iso_date")
TIMESTAMP_KINDS = ("epoch_millis", "epoch_micros", "epoch_nanos", "iso_timestamp")
TIME_KINDS = ("time_millis", "time_micros", "time_nanos", "iso_time")
BYTES_KINDS = ("bytes", "bytes_url", "bytes_hex")
# The target classes (type_class) each encoded kind converts into exactly; "text" goes anywhere.
HOLDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(DECIMAL_KINDS, ("decimal", "integral", "string")),
    **dict.fromkeys(DATE_KINDS, ("date", "timestamp", "string")),
    **dict.fromkeys(TIMESTAMP_KINDS, ("timestamp", "string")),
    "zoned_timestamp": ("timestamp", "string"),
    **dict.fromkeys(TIME_KINDS, ("string",)),
    **dict.fromkeys(BYTES_KINDS, ("binary", "string")),
    "bits": ("binary", "integral", "string"),
}
# What a fallback kind (field_kind without a schema) becomes by the value's shape.
OR_ISO = {"epoch_millis_or_iso": "epoch_millis", "epoch_unknown_or_iso": "epoch_unknown"}
BINARY_KINDS = {
    "bytes": "bytes",
    "base64": "bytes",
    "base64-url-safe": "bytes_url",
    "hex": "bytes_hex",
}


def string_binary_kind(settings: DebeziumSettings) -> str:
    """The kind of a string field's value for a binary column: the text's UTF-8 bytes, or the
    bytes binary.handling.mode (base64, base64-url-safe, hex) encoded as text."""
    mode = settings.binary_handling_mode
    return "text" if mode == "bytes" else BINARY_KINDS[mode]


@dataclass(frozen=True)
class FieldSchema:
    """A field's entry in the envelope's schema (``type``, logical ``name``, ``parameters``)."""

    type: str | None = None
    name: str | None = None
    parameters: Mapping[str, str] | None = None


def declared_scale(spark_type: str) -> int | None:
    """The scale of a declared ``decimal(p,s)``, None for other types."""
    found = _DECIMAL_TYPE.fullmatch(spark_type)
    return None if found is None else int(found.group(2))


def type_class(spark_type: str) -> str:
    """decimal, integral, date, timestamp, string, binary or other."""
    if declared_scale(spark_type) is not None:
        return "decimal"
    if spark_type in INTEGRAL_TYPES:
        return "integral"
    if spark_type in ("date", "binary") or spark_type in TIMESTAMP_TYPES:
        return "timestamp" if spark_type in TIMESTAMP_TYPES else spark_type
    if spark_type == "string" or spark_type.startswith(("varchar", "char")):
        return "string"
    return "other"


def array_name(items: Mapping | None) -> str | None:
    """The name an array field takes from its ``items`` schema: ``array of <name>`` when its
    elements are of an encoded kind (a logical name, bytes), else None (plain JSON elements)."""
    if not isinstance(items, Mapping):
        return None
    name, item_type = items.get("name"), items.get("type")
    if name in LOGICAL_KINDS:
        return ARRAY_OF + str(name)
    return ARRAY_OF + "bytes" if item_type == "bytes" and name is None else None


def logical_kind(name: str | None) -> str | None:
    """The kind a schema's logical name gives (None: not a logical name of an encoding)."""
    if name is not None and name.startswith(ARRAY_OF):
        return "refused"
    return LOGICAL_KINDS.get(name) if name is not None else None


def field_kind(
    field: FieldSchema | None, spark_type: str, settings: DebeziumSettings, column: str = ""
) -> tuple[str, str]:
    """(kind, how): how a value is decoded, and what says so (a logical name, a setting). A kind
    the declared type cannot hold is ``refused``."""
    named = settings.logical_type(column)
    if named is not None and (field is None or (field.name is None and field.type is None)):
        field = FieldSchema(None, named)
    target = type_class(spark_type)
    if field is not None and logical_kind(field.name) is not None:
        kind, how = str(logical_kind(field.name)), str(field.name)
    elif field is not None and field.type == "bytes":
        kind, how = "bytes", "bytes"
    elif field is not None and field.type is not None:
        kind = "text" if target != "binary" else string_binary_kind(settings)
        how = str(field.type) if target != "binary" else "binary.handling.mode"
    else:
        kind, how = _fallback(spark_type, settings)
    if kind == "zoned_timestamp" and target == "string":
        kind = "text"  # as sent
    base = OR_ISO.get(kind, kind)
    if base in ("text", "epoch_unknown") or target in HOLDS.get(base, ()):
        return kind, how
    return "refused", f"{how} into {spark_type}"


def _fallback(spark_type: str, settings: DebeziumSettings) -> tuple[str, str]:
    """A column's kind without a schema: from its declared type and the settings."""
    target = type_class(spark_type)
    decimal_mode = f"decimal.handling.mode={settings.decimal_handling_mode}"
    time_mode = f"time.precision.mode={settings.time_precision_mode}"
    if target == "decimal":
        return ("decimal" if settings.decimal_handling_mode == "precise" else "text"), decimal_mode
    if target == "date":
        return ("iso_date" if settings.time_precision_mode == "isostring" else "days"), time_mode
    if target == "timestamp":
        return {
            "isostring": "iso_timestamp",
            "connect": "epoch_millis_or_iso",
        }.get(settings.time_precision_mode, "epoch_unknown_or_iso"), time_mode
    if target == "binary":
        mode = settings.binary_handling_mode
        return BINARY_KINDS[mode], f"binary.handling.mode={mode}"
    return "text", "declared " + spark_type


def decode(
    text: str | None,
    field: FieldSchema | None,
    spark_type: str,
    settings: DebeziumSettings,
    column: str = "",
) -> str | None:
    """The text ``spark_type`` casts from, for one image value (None stays None)."""
    if text is None:
        return None
    kind, how = field_kind(field, spark_type, settings, column)
    if kind == "refused":
        raise Undecodable(how)
    parameters = (field.parameters if field is not None else None) or {}
    scale = declared_scale(spark_type)
    if "scale" in parameters:
        scale = values.integer(str(parameters["scale"]))
    length = parameters.get("length")
    length = values.integer(str(length)) if length is not None else None
    if kind in OR_ISO:
        if not values.is_integer(text):
            return values.iso_timestamp(text)
        kind = OR_ISO[kind]
    if kind == "epoch_unknown":
        raise Undecodable(f"{how}: an epoch number's unit is not known without a schema")
    return decode_kind(text, kind, scale, spark_type, length)


def decode_kind(
    text: str, kind: str, scale: int | None, spark_type: str = "string", length: int | None = None
) -> str:
    """``text`` decoded as ``kind`` (field_kind) into the text ``spark_type`` casts from."""
    target = type_class(spark_type)
    if kind == "text":
        if target == "decimal" and values.is_plain_decimal(text):
            return values.fit_scale(text, declared_scale(spark_type) or 0)
        return text if target != "binary" else _base64(text.encode())
    if kind in BYTES_KINDS:
        decoded = values.bytes_of(text, kind)
        return text if target == "string" else _base64(decoded)
    if kind == "bits":
        if target == "binary":
            return _base64(values.bits_bytes(text, length))
        if target == "integral":
            return values.bits_number(text, length)
        return values.bits_text(text, length)
    if kind in DECIMAL_KINDS:
        if kind == "variable_decimal" or text.startswith("{"):
            number = values.variable_decimal(text)  # an unconstrained NUMERIC
        elif scale is None:
            raise Undecodable("a decimal without a scale")
        else:
            number = values.decimal_text(values.unscaled(text), scale)
        if target == "decimal":
            return values.fit_scale(number, declared_scale(spark_type) or 0)
        return values.fit_scale(number, 0) if target == "integral" else number
    if kind in DATE_KINDS:
        day = values.days_text(values.integer(text)) if kind == "days" else values.iso_date(text)
        return day + values.MIDNIGHT if target == "timestamp" else day
    if kind in ("epoch_millis", "epoch_micros", "epoch_nanos"):
        return values.timestamp_text(values.micros_of(values.integer(text), kind))
    if kind in ("iso_timestamp", "zoned_timestamp"):
        return values.iso_timestamp(text)
    if kind in ("time_millis", "time_micros", "time_nanos"):
        return values.time_text(values.micros_of(values.integer(text), kind))
    if kind == "iso_time":
        return values.iso_time(text)
    raise ValueError(f"unknown kind {kind}")


def _base64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()
