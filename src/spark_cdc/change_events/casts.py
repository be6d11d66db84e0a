"""Plain-Python model of Spark's ``try_cast`` from a string, for the change-event reference.

The Spark code casts every image value with ``try_cast`` (the same result with ANSI mode on or
off); the reference (change_events.reference) and the validation model (model.validate) must
accept and refuse exactly the same spellings. Rules, measured on Spark 4.2 (see
docs/change-events.md, "Accepted spellings"):

- integral (tinyint, smallint, int, bigint): ASCII ``[+-]?[0-9]+`` once the characters U+0000 to
  U+0020 and U+007F are trimmed at both ends; out of range is refused (no truncation: ``1.5``,
  ``1e3``, ``1_000`` and other digits than ASCII are refused);
- double and float: Java's ``Double.parseDouble`` grammar once U+0000 to U+0020 are trimmed
  (decimal or hexadecimal, optional exponent, ``d``/``f`` suffix, ``NaN`` and ``Infinity`` with a
  sign, case as written), else the case-insensitive words ``inf``, ``+inf``, ``infinity``,
  ``+infinity``, ``-inf``, ``-infinity`` and ``nan``; a float is the double rounded to 32 bits;
- decimal(p, s): Java's ``BigDecimal`` grammar once U+0000 to U+0020 are trimmed (any Unicode
  decimal digit, optional exponent), rounded half up to ``s`` places, refused when it then needs
  more than ``p - s`` integer digits;
- boolean: once trimmed as integral values and lower-cased, ``t``, ``true``, ``y``, ``yes``, ``1``
  are true and ``f``, ``false``, ``n``, ``no``, ``0`` false;
- string: the text as it is.

Date and timestamp columns are cast by Spark alone (no Python model): the reference refuses to
model them.
"""

from __future__ import annotations

import math
import re
import struct
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

_INTEGRAL_RANGES = {
    "tinyint": 8,
    "byte": 8,
    "smallint": 16,
    "short": 16,
    "int": 32,
    "integer": 32,
    "bigint": 64,
    "long": 64,
}
_CONTROL_AND_SPACE = "".join(map(chr, range(0x21)))
_INTEGRAL = re.compile(r"[+-]?[0-9]+", re.ASCII)
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity"
    r"|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)",
    re.ASCII,
)
_SPECIAL_DOUBLES = {
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
    "nan": math.nan,
}
# Java's BigDecimal(String): \d is any Unicode decimal digit, as Python's \d in a str pattern.
_JAVA_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DECIMAL_TYPE = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_TRUE, _FALSE = {"t", "true", "y", "yes", "1"}, {"f", "false", "n", "no", "0"}


def modelled(spark_type: str) -> bool:
    """Whether the Python model casts to ``spark_type`` (a Spark SQL type name, lower case)."""
    return (
        spark_type in _INTEGRAL_RANGES
        or spark_type in ("double", "float", "real", "boolean", "string")
        or _DECIMAL_TYPE.fullmatch(spark_type) is not None
    )


def try_cast(text: str, spark_type: str) -> object:
    """``try_cast(text as spark_type)``; raises ValueError where Spark gives NULL."""
    if spark_type == "string":
        return text
    if spark_type in _INTEGRAL_RANGES:
        return _integral(text, _INTEGRAL_RANGES[spark_type])
    if spark_type == "double":
        return _double(text)
    if spark_type in ("float", "real"):
        return _float32(_double(text))
    if spark_type == "boolean":
        return _boolean(text)
    decimal_type = _DECIMAL_TYPE.fullmatch(spark_type)
    if decimal_type:
        return _decimal(text, int(decimal_type.group(1)), int(decimal_type.group(2)))
    raise NotImplementedError(f"no Python model of casts to {spark_type}")


def _integral(text: str, bits: int) -> int:
    trimmed = text.strip(_CONTROL_AND_SPACE + "\x7f")
    if not _INTEGRAL.fullmatch(trimmed):
        raise ValueError(f"not an integer: {text!r}")
    value = int(trimmed)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f"out of range for {bits} bits: {text!r}")
    return value


def _double(text: str) -> float:
    trimmed = text.strip(_CONTROL_AND_SPACE)
    if _JAVA_DOUBLE.fullmatch(trimmed):
        number = trimmed.rstrip("fFdD") if not trimmed.endswith(("NaN", "Infinity")) else trimmed
        if "x" in number.lower() and "infinity" not in number.lower():
            return float.fromhex(number)
        return float(number.replace("Infinity", "inf"))
    special = _SPECIAL_DOUBLES.get(trimmed.lower())
    if special is None:
        raise ValueError(f"not a number: {text!r}")
    return special


def _float32(value: float) -> float:
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _decimal(text: str, precision: int, scale: int) -> Decimal:
    trimmed = text.strip(_CONTROL_AND_SPACE)
    if not _JAVA_DECIMAL.fullmatch(trimmed):
        raise ValueError(f"not a decimal: {text!r}")
    try:
        with localcontext() as context:
            context.prec = 1000
            rounded = Decimal(trimmed).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    except InvalidOperation as error:
        raise ValueError(f"out of range for decimal({precision},{scale}): {text!r}") from error
    if len(rounded.as_tuple().digits) > precision and rounded != 0:
        raise ValueError(f"out of range for decimal({precision},{scale}): {text!r}")
    return rounded


def _boolean(text: str) -> bool:
    word = text.strip(_CONTROL_AND_SPACE + "\x7f").lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"not a boolean: {text!r}")
