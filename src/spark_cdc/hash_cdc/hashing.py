"""Deterministic, null-safe, type-stable, column-order independent row hashes (Spark built-ins).

A hash covers a set of (column name, typed value) pairs, sorted by column name. Each value is
rendered by Spark's cast of the *typed* value to string (so "1.50" and "1.5" read as
decimal(10,2) hash alike) and encoded as ``name=<length>:<text>``, or ``name=~`` when NULL: NULL
and the empty string differ, and no value can imitate a separator. The pairs are joined with
``|`` and hashed with MD5.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F


def _encoded(column: str) -> Column:
    text = F.col(column).cast("string")
    return F.concat(
        F.lit(f"{column}="),
        F.when(text.isNull(), F.lit("~")).otherwise(
            F.concat(F.length(text).cast("string"), F.lit(":"), text)
        ),
    )


def row_hash(columns: Iterable[str]) -> Column:
    """MD5 of the named typed columns (order of ``columns`` does not matter)."""
    ordered = sorted(set(columns))
    if not ordered:
        return F.md5(F.lit(""))
    return F.md5(F.concat_ws("|", *[_encoded(column) for column in ordered]))


def python_row_hash_text(values: dict[str, str | None]) -> str:
    """The text that :func:`row_hash` hashes, for string-rendered values (reference/tests)."""
    parts = []
    for column in sorted(values):
        text = values[column]
        parts.append(f"{column}=~" if text is None else f"{column}={len(text)}:{text}")
    return "|".join(parts)
