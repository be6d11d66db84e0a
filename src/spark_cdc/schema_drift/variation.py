"""The schema variation of a JSON payload: which attributes it has, at which paths, of which kind.

A payload's *variation signature* is Spark's ``schema_of_variant`` of the parsed payload with every
fractional number type written ``DOUBLE``: object keys are sorted (attribute order does not count),
nested objects and arrays are described recursively, the elements of an array are merged (an
array of objects lists the union of their attributes), and each leaf has its JSON kind (``STRING``,
``BOOLEAN``, ``BIGINT`` for integers, ``DOUBLE`` for other numbers, ``VOID`` for null). Elements of
different kinds in one array merge to ``VARIANT`` (integers and other numbers merge to ``DOUBLE``,
null merges into anything). The *variation hash* is the SHA-256 of the signature, in hex.

Values never count: two payloads of one event type have the same hash exactly when they have the
same attribute paths with the same kinds. :func:`signature_of` is the plain-Python model of the
same rules, used to test the Spark expression.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_cdc.core.json_text import strict_variant

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SIMPLE_NAME = re.compile(r"[a-zA-Z0-9_]+")
_ALL_DIGITS = re.compile(r"\d+")

# Parse errors of a line, in the order they are checked.
INVALID_UTF8 = "invalid_utf8"
MALFORMED_JSON = "malformed_json"
NOT_AN_OBJECT = "not_an_object"
MISSING_EVENT_TYPE = "missing_event_type"


def parsed_payload(payload: Column) -> Column:
    """The payload as a VARIANT; null unless it is exactly one valid JSON value (no text after
    it, no duplicate keys, valid UTF-8, nesting within Spark's parser limit): json_text."""
    return strict_variant(payload)


def variation_signature(parsed: Column) -> Column:
    """The variation signature of a parsed payload (a VARIANT column)."""
    return F.regexp_replace(F.schema_of_variant(parsed), r"DECIMAL\(\d+,\d+\)", "DOUBLE")


def variation_hash(parsed: Column) -> Column:
    """SHA-256 (hex) of the variation signature."""
    return F.sha2(variation_signature(parsed), 256)


def event_type_of(parsed: Column) -> Column:
    """The top-level ``event_type`` attribute (null when missing, null or not a string)."""
    value = F.try_variant_get(parsed, "$.event_type", "variant")
    return F.when(F.schema_of_variant(value) == "STRING", value.cast("string"))


def parse_error(payload: Column, parsed: Column) -> Column:
    """Why a line cannot be registered (null when it can): see the constants above."""
    event_type = F.trim(event_type_of(parsed))
    return (
        F.when(payload.isNotNull() & ~F.is_valid_utf8(payload), F.lit(INVALID_UTF8))
        .when(payload.isNull() | parsed.isNull(), F.lit(MALFORMED_JSON))
        .when(~F.schema_of_variant(parsed).startswith("OBJECT<"), F.lit(NOT_AN_OBJECT))
        .when(event_type.isNull() | (event_type == ""), F.lit(MISSING_EVENT_TYPE))
    )


# --- plain-Python model -------------------------------------------------------------------------


def _kind(value: Any) -> Any:
    """The kind tree of one JSON value: a type name, ('OBJECT', {key: kind}) or ('ARRAY', kind)."""
    if value is None:
        return "VOID"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT" if INT64_MIN <= value <= INT64_MAX else "DOUBLE"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, dict):
        return ("OBJECT", {key: _kind(item) for key, item in value.items()})
    if isinstance(value, list):
        element: Any = "VOID"
        for item in value:
            element = _merge(element, _kind(item))
        return ("ARRAY", element)
    raise TypeError(f"not a JSON value: {value!r}")


def _merge(left: Any, right: Any) -> Any:
    """Merge two element kinds of one array, as schema_of_variant does."""
    if left == "VOID":
        return right
    if right == "VOID" or left == right:
        return left
    if isinstance(left, str) and isinstance(right, str) and {left, right} == {"BIGINT", "DOUBLE"}:
        return "DOUBLE"
    if isinstance(left, tuple) and isinstance(right, tuple) and left[0] == right[0]:
        if left[0] == "ARRAY":
            return ("ARRAY", _merge(left[1], right[1]))
        fields = dict(left[1])
        for key, kind in right[1].items():
            fields[key] = _merge(fields[key], kind) if key in fields else kind
        return ("OBJECT", fields)
    return "VARIANT"


def _quote(name: str) -> str:
    if _SIMPLE_NAME.fullmatch(name) and not _ALL_DIGITS.fullmatch(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _java_order(name: str) -> bytes:
    """Sort key of Java's String.compareTo (UTF-16 code units), the order of variant keys."""
    return name.encode("utf-16-be")


def _render(kind: Any) -> str:
    if isinstance(kind, str):
        return kind
    if kind[0] == "ARRAY":
        return f"ARRAY<{_render(kind[1])}>"
    fields = sorted(kind[1].items(), key=lambda item: _java_order(item[0]))
    return "OBJECT<" + ", ".join(f"{_quote(key)}: {_render(value)}" for key, value in fields) + ">"


def signature_of(payload: Any) -> str:
    """Plain-Python variation signature of a decoded JSON value (same text as the Spark one)."""
    return _render(_kind(payload))


def hash_of(payload_text: str) -> str:
    """Plain-Python variation hash of a JSON text."""
    return hashlib.sha256(signature_of(json.loads(payload_text)).encode("utf-8")).hexdigest()
