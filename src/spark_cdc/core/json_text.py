"""Strict JSON parsing of text lines in Spark (JVM expressions, no Python UDF).

Spark's parsers read the first JSON value of a text and ignore what follows it, so
``{"a": 1}garbage`` parses as ``{"a": 1}``. A line counts as JSON here only when it is exactly one
JSON value: it is parsed inside an array followed by a check element (the text's own xxhash64),
``[<text>,<hash>]``. Trailing garbage breaks that array; a text that closes the array early and
imitates the check element would need to contain its own hash.

Texts that are not valid UTF-8 are refused first (Spark keeps such bytes as they are in a string,
and its JSON parser would accept them).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def _checked(text: Column) -> Column:
    check = F.xxhash64(text)
    wrapped = F.concat(F.lit("["), text, F.lit(","), check.cast("string"), F.lit("]"))
    parsed = F.try_parse_json(wrapped)
    elements = F.try_variant_get(parsed, "$", "array<variant>")
    exact = (F.size(elements) == 2) & (F.try_variant_get(parsed, "$[1]", "bigint") == check)
    return F.when(F.is_valid_utf8(text) & exact, F.try_variant_get(parsed, "$[0]", "variant"))


def strict_variant(text: Column) -> Column:
    """The text as a VARIANT when it is exactly one valid JSON value; else null (not UTF-8, not
    JSON, text after the value, nesting deeper than Spark's parser allows, duplicate keys)."""
    return _checked(text)


def is_strict_json(text: Column) -> Column:
    """Whether the text is exactly one valid JSON value (false for null)."""
    return F.coalesce(_checked(text).isNotNull(), F.lit(False))
