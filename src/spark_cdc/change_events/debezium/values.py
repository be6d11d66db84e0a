"""Plain-Python decoding of one Debezium value of a kind (debezium.types) into the text its
target column casts from: the written semantics change_events.debezium.decode computes in
Spark. Every function raises ``Undecodable`` for a value that is not what its kind says, or that
its target cannot hold exactly."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, date, datetime, timedelta

_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", re.ASCII)
_BASE64_URL = re.compile(r"[A-Za-z0-9_-]*={0,2}", re.ASCII)
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})*", re.ASCII)
_DECIMAL_TEXT = re.compile(r"(-?[0-9]+)(?:\.([0-9]+))?", re.ASCII)
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
# A time of MySQL's TIME range (-838:59:59 to 838:59:59) and its microseconds.
MAX_TIME_MICROS = (838 * 3600 + 59 * 60 + 59) * 1_000_000 + 999_999
MIDNIGHT = " 00:00:00.000000"


class Undecodable(ValueError):
    """A value that does not decode as its field says it is encoded."""


def integer(text: str) -> int:
    if _INTEGER.fullmatch(text) is None:
        raise Undecodable(f"not an integer: {text!r}")
    return int(text)


def base64_bytes(text: str) -> bytes:
    """Standard base64 (padded) -> bytes."""
    if _BASE64.fullmatch(text) is None:
        raise Undecodable(f"not base64 bytes: {text!r}")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as error:
        raise Undecodable(f"not base64 bytes: {text!r}") from error


def bytes_of(text: str, kind: str) -> bytes:
    """The bytes of a ``bytes`` (base64), ``bytes_url`` (URL-safe base64, padding optional) or
    ``bytes_hex`` value."""
    if kind == "bytes_hex":
        if _HEX.fullmatch(text) is None:
            raise Undecodable(f"not hex bytes: {text!r}")
        return bytes.fromhex(text)
    if kind == "bytes_url":
        if _BASE64_URL.fullmatch(text) is None:
            raise Undecodable(f"not URL-safe base64 bytes: {text!r}")
        unpadded = text.rstrip("=")
        if len(unpadded) % 4 == 1:
            raise Undecodable(f"not URL-safe base64 bytes: {text!r}")
        standard = unpadded.replace("-", "+").replace("_", "/")
        return base64_bytes(standard + "=" * (-len(standard) % 4))
    return base64_bytes(text)


def unscaled(text: str) -> int:
    """The signed integer of base64 two's-complement big-endian bytes (sign-extended)."""
    if not text:
        raise Undecodable("no bytes")
    value = int.from_bytes(base64_bytes(text), "big", signed=True)
    if abs(value) >= 10**38:
        raise Undecodable("more than 38 digits")
    return value


def variable_decimal(text: str) -> str:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise Undecodable(f"not a {{scale, value}} object: {text!r}") from error
    if not isinstance(parsed, dict) or not isinstance(parsed.get("value"), str):
        raise Undecodable(f"not a {{scale, value}} object: {text!r}")
    scale = parsed.get("scale")
    if not isinstance(scale, int) or isinstance(scale, bool):
        raise Undecodable(f"not a {{scale, value}} object: {text!r}")
    return decimal_text(unscaled(parsed["value"]), scale)


def decimal_text(value: int, scale: int) -> str:
    """``value`` * 10^-``scale`` as plain decimal text (``-0.05``, ``1200``)."""
    sign = "-" if value < 0 else ""
    digits = str(abs(value))
    if scale <= 0:
        return sign + digits + "0" * -scale if value else "0"
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def fit_scale(text: str, scale: int) -> str:
    """A decimal's text with at most ``scale`` places: the places beyond it must be zeros (they
    are dropped); any other digit there would be rounded, so the value is refused."""
    found = _DECIMAL_TEXT.fullmatch(text)
    if found is None:
        raise Undecodable(f"not a decimal: {text!r}")
    whole, fraction = found.group(1), found.group(2) or ""
    if fraction[scale:].strip("0"):
        raise Undecodable(f"{text} has more than {scale} decimal places")
    kept = fraction[:scale]
    return whole + ("." + kept if kept else "")


def micros_of(value: int, kind: str) -> int:
    """An epoch or time kind's integer in microseconds (integer arithmetic)."""
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
    """Microseconds from midnight as ``[-]HH:mm:ss.SSSSSS``: a time of day (24:00:00 is its
    end) or a MySQL TIME (-838:59:59.999999 to 838:59:59.999999, hours as many digits as they
    need)."""
    if abs(micros) > MAX_TIME_MICROS:
        raise Undecodable(f"{micros} µs is outside -838:59:59.999999 to 838:59:59.999999")
    sign = "-" if micros < 0 else ""
    seconds, fraction = divmod(abs(micros), 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{sign}{hour:02d}:{minute:02d}:{second:02d}.{fraction:06d}"


def days_text(days: int) -> str:
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise Undecodable(f"{days} days is outside the years 1-9999")
    return (EPOCH.date() + timedelta(days=days)).isoformat()


def iso_date(text: str) -> str:
    found = _ISO_DATE.fullmatch(text)
    if found is None:
        raise Undecodable(f"not an ISO date: {text!r}")
    return found.group(1)


def iso_time(text: str) -> str:
    found = _ISO_TIME.fullmatch(text)
    if found is None:
        raise Undecodable(f"not an ISO time: {text!r}")
    return found.group(1)


def is_integer(text: str) -> bool:
    return _INTEGER.fullmatch(text) is not None


def is_plain_decimal(text: str) -> bool:
    return _DECIMAL_TEXT.fullmatch(text) is not None


def iso_timestamp(text: str) -> str:
    """An ISO-8601 timestamp (optional offset) as its UTC instant's text."""
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


def bits_bytes(text: str, length: int | None) -> bytes:
    """A BIT(n) value (Debezium's Bits: little-endian bytes in base64) as the database's
    big-endian bytes, ceil(n/8) of them (n: the schema's ``length``)."""
    raw = base64_bytes(text)
    if length is not None and length < 0:
        raise Undecodable(f"BIT({length})")
    size = len(raw) if length is None else (length + 7) // 8
    value = int.from_bytes(raw, "little")
    if value.bit_length() > size * 8:
        raise Undecodable(f"{len(raw)} bytes do not fit BIT({length})")
    return value.to_bytes(size, "big")


def bits_number(text: str, length: int | None) -> str:
    """A BIT(n) value as its unsigned number (at most 64 bits)."""
    value = int.from_bytes(bits_bytes(text, length), "big")
    if value >= 2**64:
        raise Undecodable("more than 64 bits")
    return str(value)


def bits_text(text: str, length: int | None) -> str:
    """A BIT(n) value as its n binary digits (``0101``)."""
    raw = bits_bytes(text, length)
    width = len(raw) * 8 if length is None else length
    value = int.from_bytes(raw, "big")
    if value >= 2**64 or value.bit_length() > width:
        raise Undecodable(f"the value does not fit BIT({length})")
    return format(value, "b").rjust(width, "0")
