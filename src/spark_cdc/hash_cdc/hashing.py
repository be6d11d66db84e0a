"""Deterministic, null-safe, type-stable, column-order independent row hashes (Spark built-ins).

A hash covers a set of typed columns: they are sorted by name, rendered together as one JSON
object (``to_json`` of a struct: strings quoted and escaped, NULL written as ``null``, numbers,
decimals and dates in their canonical form, timestamps zone-less), and the text is hashed with
MD5. So NULL and the empty string differ, no value can imitate a separator, the order of the
columns in the extract does not matter, and "1.50" and "1.5" read as decimal(10,2) hash alike.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F

JSON_OPTIONS = {
    "ignoreNullFields": "false",
    "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSSSSS",
    "timestampNTZFormat": "yyyy-MM-dd HH:mm:ss.SSSSSS",
    "dateFormat": "yyyy-MM-dd",
}


def column(name: str) -> Column:
    """The column named ``name`` exactly (dots, spaces, backticks are part of the name)."""
    return F.col("`" + name.replace("`", "``") + "`")


def row_hash(columns: Iterable[str]) -> Column:
    """MD5 of the named typed columns (order of ``columns`` does not matter)."""
    ordered = sorted(set(columns))
    if not ordered:
        return F.md5(F.lit(""))
    return F.md5(F.to_json(F.struct(*[column(c) for c in ordered]), JSON_OPTIONS))
