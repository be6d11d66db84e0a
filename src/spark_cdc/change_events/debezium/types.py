"""Debezium's value encodings, decoded into the text the target type casts from (plain Python:
the written semantics that change_events.debezium.decode computes in Spark).

A value of an image arrives as JSON; Spark reads each attribute of ``before``/``after`` as text
(a string as it is, a number or boolean as written, an object or array as its JSON text). How to
read that text comes from the field's entry in the message's schema envelope when there is one
(its logical ``name``, its ``type`` and ``parameters``), else from the source's declared Spark
type and its Debezium settings (``DebeziumSettings``: the connector's ``decimal.handling.mode``
and ``time.precision.mode``). The envelope wins: a message that carries a schema decodes the same
whatever the settings say.

Kinds (``field_kind``) and what they become:

- ``decimal``: base64 two's-complement big-endian bytes (sign-extended), the scale from the
  schema's ``scale`` parameter or the declared ``decimal(p,s)`` -> the decimal's text (``-12.34``);
  an object ``{"scale": s, "value": bytes}`` is read as ``variable_decimal``;
- ``variable_decimal``: ``{"scale": s, "value": base64 bytes}`` -> the decimal's text;
- ``days``: days since 1970-01-01 -> ``yyyy-MM-dd``;
- ``epoch_millis`` / ``epoch_micros`` / ``epoch_nanos``: since 1970-01-01 00:00 UTC ->
  ``yyyy-MM-dd HH:mm:ss.SSSSSS``;
- ``time_millis`` / ``time_micros`` / ``time_nanos``: since midnight -> ``HH:mm:ss.SSSSSS``;
- ``iso_timestamp``: ISO-8601 with an optional offset (``Z``, ``+02:00``) -> the UTC instant as
  ``yyyy-MM-dd HH:mm:ss.SSSSSS``; ``iso_date``: ``yyyy-MM-dd`` with an optional ``Z`` ->
  ``yyyy-MM-dd``; ``iso_time``: ``HH:mm:ss[.f]`` with an optional zone -> ``HH:mm:ss[.f]``;
- ``text``: anything else (strings, numbers, booleans, JSON, UUIDs, intervals, zoned times,
  bits, bytes as base64) -> the text as it is.

A kind decodes only into a type that holds it (``kinds_for``): dates into date and string
columns, timestamps into timestamp and string columns, times into string columns, decimals
into numeric and string columns; elsewhere the text stays as sent (and the cast decides).
A zoned timestamp (``io.debezium.time.ZonedTimestamp``) becomes UTC for a ``timestamp`` or
``timestamp_ntz`` target and stays as sent for any other. A value that does not decode (not
base64, not an integer, out of the range of years 1-9999, nanoseconds a microsecond cannot hold,
a malformed ISO text) raises ``Undecodable`` with the column and what was expected: the event is
quarantined ``undecodable:<column>:<how>``, never cast to something else.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

DECIMAL_MODES = ("precise", "double", "string")
TIME_MODES = ("adaptive", "adaptive_time_microseconds", "connect", "isostring")
TRUNCATE_CHOICES = ("apply", "refuse")
DEFAULT_PLACEHOLDER = "__debezium_unavailable_value"

_DECIMAL_TYPE = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", re.ASCII)
_ISO_TIMESTAMP = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?",
    re.ASCII,
)
_ISO_DATE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})Z?", re.ASCII)
_ISO_TIME = re.compile(r"([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)(?:Z|[+-][0-9]{2}:[0-9]{2})?")
EPOCH = datetime(1970, 1, 1)
# Years 1 to 9999 (what Spark's date and timestamp types hold), in days and microseconds.
MIN_DAYS, MAX_DAYS = (date(1, 1, 1) - EPOCH.date()).days, (date(9999, 12, 31) - EPOCH.date()).days
MIN_MICROS = (datetime(1, 1, 1) - EPOCH) // timedelta(microseconds=1)
MAX_MICROS = (datetime(9999, 12, 31, 23, 59, 59, 999999) - EPOCH) // timedelta(microseconds=1)
DAY_MICROS = 86_400_000_000

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
}
TIMESTAMP_TYPES = ("timestamp", "timestamp_ntz", "timestamp_ltz")

_DECIMAL_KINDS = ("decimal", "variable_decimal")
_TIME_KINDS = ("time_millis", "time_micros", "time_nanos", "iso_time")
_TIMESTAMP_KINDS = ("epoch_millis", "epoch_micros", "epoch_nanos", "iso_timestamp")
_DATE_KINDS = ("days", "iso_date")


class Undecodable(ValueError):
    """A value that does not decode as its field says it is encoded."""


@dataclass(frozen=True)
class DebeziumSettings:
    """The connector's settings a source's values are read with (``change_events.debezium``)."""

    decimal_handling_mode: str = "precise"
    time_precision_mode: str = "adaptive"
    unavailable_value_placeholder: str = DEFAULT_PLACEHOLDER
    truncate: str = "apply"

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> DebeziumSettings:
        """From the source's ``debezium`` block (the connector's own setting names)."""
        raw = dict(raw or {})
        known = {
            "decimal.handling.mode",
            "time.precision.mode",
            "unavailable.value.placeholder",
            "truncate",
        }
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"change_events.debezium: unknown settings {unknown}; known: {known}")
        settings = cls(
            str(raw.get("decimal.handling.mode", cls.decimal_handling_mode)).lower(),
            str(raw.get("time.precision.mode", cls.time_precision_mode)).lower(),
            str(raw.get("unavailable.value.placeholder", cls.unavailable_value_placeholder)),
            str(raw.get("truncate", cls.truncate)).lower(),
        )
        for name, value, allowed in (
            ("decimal.handling.mode", settings.decimal_handling_mode, DECIMAL_MODES),
            ("time.precision.mode", settings.time_precision_mode, TIME_MODES),
            ("truncate", settings.truncate, TRUNCATE_CHOICES),
        ):
            if value not in allowed:
                raise ValueError(f"change_events.debezium.{name} must be one of {allowed}")
        if not settings.unavailable_value_placeholder:
            raise ValueError("change_events.debezium.unavailable.value.placeholder is empty")
        return settings

    def placeholders(self) -> tuple[str, ...]:
        """The placeholder's spellings in an image: as text, as base64 bytes, as a JSON array."""
        text = self.unavailable_value_placeholder
        return (
            text,
            base64.b64encode(text.encode()).decode(),
            json.dumps([text], separators=(",", ":")),
        )


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


def kinds_for(spark_type: str) -> tuple[str, ...]:
    """The kinds a column of ``spark_type`` decodes (any other kind: its text as it is), so
    that each column's expression holds only the branches its type can use."""
    if spark_type == "date":
        return _DATE_KINDS
    if spark_type in TIMESTAMP_TYPES:
        return _TIMESTAMP_KINDS
    if spark_type in ("string", "varchar", "char") or spark_type.startswith(("varchar", "char")):
        return _DECIMAL_KINDS + _DATE_KINDS + _TIMESTAMP_KINDS + _TIME_KINDS
    if spark_type in ("boolean", "binary"):
        return ()
    return _DECIMAL_KINDS  # numbers: a decimal's text casts to any of them


def field_kind(
    field: FieldSchema | None, spark_type: str, settings: DebeziumSettings
) -> tuple[str, str]:
    """(kind, how): how a value is decoded, and what says so (a logical name, a mode setting)."""
    if field is not None and field.name in LOGICAL_KINDS:
        kind = LOGICAL_KINDS[field.name]
        if kind == "zoned_timestamp":  # to UTC for a timestamp, else as sent
            kind = "iso_timestamp" if spark_type in TIMESTAMP_TYPES else "text"
        return (kind if kind in kinds_for(spark_type) else "text"), str(field.name)
    if field is not None and field.type is not None:
        return ("bytes" if field.type == "bytes" else "text"), str(field.type)
    decimal_mode = f"decimal.handling.mode={settings.decimal_handling_mode}"
    time_mode = f"time.precision.mode={settings.time_precision_mode}"
    if declared_scale(spark_type) is not None:
        return ("decimal" if settings.decimal_handling_mode == "precise" else "text"), decimal_mode
    if spark_type == "date":
        return ("iso_date" if settings.time_precision_mode == "isostring" else "days"), time_mode
    if spark_type in TIMESTAMP_TYPES:
        return {
            "isostring": "iso_timestamp",
            "connect": "epoch_millis_or_iso",
        }.get(settings.time_precision_mode, "epoch_micros_or_iso"), time_mode
    return "text", "declared " + spark_type


def decode(
    text: str | None,
    field: FieldSchema | None,
    spark_type: str,
    settings: DebeziumSettings,
) -> str | None:
    """The text ``spark_type`` casts from, for one image value (None stays None)."""
    if text is None:
        return None
    kind, _ = field_kind(field, spark_type, settings)
    scale = declared_scale(spark_type)
    if field is not None and field.parameters and "scale" in field.parameters:
        scale = _integer(field.parameters["scale"])
    return decode_kind(text, kind, scale)


def decode_kind(text: str, kind: str, scale: int | None) -> str:
    """``text`` decoded as ``kind`` (field_kind), ``scale`` for ``decimal``."""
    if kind in ("text", "bytes"):
        return text
    if kind == "decimal" and text.startswith("{"):
        return _variable_decimal(text)  # an unconstrained NUMERIC, without a schema
    if kind == "decimal":
        if scale is None:
            raise Undecodable("a decimal without a scale")
        return decimal_text(_unscaled(text), scale)
    if kind == "variable_decimal":
        return _variable_decimal(text)
    if kind == "days":
        days = _integer(text)
        if not MIN_DAYS <= days <= MAX_DAYS:
            raise Undecodable(f"{days} days is outside the years 1-9999")
        return (EPOCH.date() + timedelta(days=days)).isoformat()
    if kind.startswith("epoch_") and kind.endswith("_or_iso"):
        if _INTEGER.fullmatch(text) is None:
            return _iso_timestamp(text)
        kind = kind[: -len("_or_iso")]
    if kind in ("epoch_millis", "epoch_micros", "epoch_nanos"):
        return timestamp_text(_micros(_integer(text), kind))
    if kind in ("time_millis", "time_micros", "time_nanos"):
        micros = _micros(_integer(text), kind)
        if not 0 <= micros <= DAY_MICROS:
            raise Undecodable(f"{text} is not a time of day")
        return time_text(micros)
    if kind == "iso_timestamp":
        return _iso_timestamp(text)
    if kind == "iso_date":
        found = _ISO_DATE.fullmatch(text)
        if found is None:
            raise Undecodable(f"not an ISO date: {text!r}")
        return found.group(1)
    if kind == "iso_time":
        found = _ISO_TIME.fullmatch(text)
        if found is None:
            raise Undecodable(f"not an ISO time: {text!r}")
        return found.group(1)
    raise ValueError(f"unknown kind {kind}")


def _integer(text: str) -> int:
    if _INTEGER.fullmatch(text) is None:
        raise Undecodable(f"not an integer: {text!r}")
    return int(text)


def _unscaled(text: str) -> int:
    """The signed integer of base64 two's-complement big-endian bytes (sign-extended)."""
    if not text or _BASE64.fullmatch(text) is None:
        raise Undecodable(f"not base64 bytes: {text!r}")
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error as error:
        raise Undecodable(f"not base64 bytes: {text!r}") from error
    value = int.from_bytes(raw, "big", signed=True)
    if abs(value) >= 10**38:
        raise Undecodable("more than 38 digits")
    return value


def _variable_decimal(text: str) -> str:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise Undecodable(f"not a {{scale, value}} object: {text!r}") from error
    if not isinstance(parsed, dict) or not isinstance(parsed.get("value"), str):
        raise Undecodable(f"not a {{scale, value}} object: {text!r}")
    scale = parsed.get("scale")
    if not isinstance(scale, int) or isinstance(scale, bool):
        raise Undecodable(f"not a {{scale, value}} object: {text!r}")
    return decimal_text(_unscaled(parsed["value"]), scale)


def decimal_text(unscaled: int, scale: int) -> str:
    """``unscaled`` * 10^-``scale`` as plain decimal text (``-0.05``, ``1200``)."""
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled))
    if scale <= 0:
        return sign + digits + "0" * -scale if unscaled else "0"
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def _micros(value: int, kind: str) -> int:
    if kind.endswith("millis"):
        return value * 1000
    if kind.endswith("nanos"):
        if value % 1000:
            raise Undecodable(f"{value} ns is finer than a microsecond")
        return value // 1000
    return value


def timestamp_text(micros: int) -> str:
    """Microseconds since the epoch as ``yyyy-MM-dd HH:mm:ss.SSSSSS`` (years 1-9999)."""
    if not MIN_MICROS <= micros <= MAX_MICROS:
        raise Undecodable(f"{micros} µs is outside the years 1-9999")
    moment = EPOCH + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f").rjust(26, "0")


def time_text(micros: int) -> str:
    """Microseconds since midnight as ``HH:mm:ss.SSSSSS`` (24:00:00 is midnight's end)."""
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{hour:02d}:{minute:02d}:{second:02d}.{fraction:06d}"


def _iso_timestamp(text: str) -> str:
    found = _ISO_TIMESTAMP.fullmatch(text)
    if found is None:
        raise Undecodable(f"not an ISO timestamp: {text!r}")
    day, hour, minute, second, fraction, offset = found.groups()
    fraction = (fraction or "").ljust(9, "0")
    if fraction[6:] != "000":
        raise Undecodable(f"{text!r} is finer than a microsecond")
    try:
        moment = datetime.fromisoformat(f"{day}T{hour}:{minute}:{second}")
    except ValueError as error:
        raise Undecodable(f"not an ISO timestamp: {text!r}") from error
    moment += timedelta(microseconds=int(fraction[:6]))
    if offset and offset != "Z":
        sign = 1 if offset[0] == "+" else -1
        shift = timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
        try:
            moment = (moment - sign * shift).replace(tzinfo=UTC).replace(tzinfo=None)
        except OverflowError as error:
            raise Undecodable(f"{text!r} is outside the years 1-9999") from error
    return timestamp_text((moment - EPOCH) // timedelta(microseconds=1))
