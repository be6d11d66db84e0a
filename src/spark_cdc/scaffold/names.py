"""Validation of what ``spark-cdc add`` is given: names, column specs and Spark types."""

from __future__ import annotations

import re
from collections.abc import Iterable

NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
SIMPLE_TYPES = {
    "string": "string",
    "int": "int",
    "integer": "int",
    "bigint": "bigint",
    "long": "bigint",
    "smallint": "smallint",
    "tinyint": "tinyint",
    "double": "double",
    "float": "float",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
    "binary": "binary",
}
DECIMAL = re.compile(r"^decimal\(\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\)$")


class AddError(ValueError):
    """What ``spark-cdc add`` was given cannot be used; nothing was written."""


def source_name(name: str, what: str) -> str:
    """A lower-case identifier (letters, digits, single underscores), at most 40 characters."""
    if not NAME.match(name) or "__" in name or name.endswith("_"):
        raise AddError(
            f"{what} name {name!r} is not usable: lower-case letters, digits and single "
            "underscores, starting with a letter, at most 40 characters (e.g. orders)"
        )
    return name


def spark_type(text: str, column: str) -> str:
    """The Spark SQL type named by ``text`` (simple types and decimal(p,s)), normalized."""
    folded = text.strip().lower()
    if folded in SIMPLE_TYPES:
        return SIMPLE_TYPES[folded]
    match = DECIMAL.match(folded)
    if match and 0 < int(match.group(1)) <= 38 and int(match.group(2)) <= int(match.group(1)):
        return f"decimal({match.group(1)},{match.group(2)})"
    known = ", ".join(sorted(set(SIMPLE_TYPES.values())))
    raise AddError(f"column {column}: unknown type {text!r} (known: {known}, decimal(p,s))")


def column_name(name: str) -> str:
    """A column name usable unquoted in Spark SQL."""
    if not COLUMN.match(name):
        raise AddError(
            f"column name {name!r} is not usable: letters, digits and underscores, not "
            "starting with a digit"
        )
    return name


def columns(specs: Iterable[str], option: str) -> dict[str, str]:
    """``name:type`` specs as an ordered mapping; duplicate names (ignoring case) refused."""
    parsed: dict[str, str] = {}
    for spec in specs:
        name, sep, kind = spec.partition(":")
        if not sep:
            raise AddError(f"{option} {spec!r}: expected name:type (e.g. amount:bigint)")
        name = column_name(name.strip())
        if name.lower() in {n.lower() for n in parsed}:
            raise AddError(f"{option}: column {name} is given twice")
        parsed[name] = spark_type(kind, name)
    return parsed


def refuse_reserved(names: Iterable[str], reserved: Iterable[str], what: str) -> None:
    """Columns whose names the generated tables already use are refused."""
    taken = {r.lower() for r in reserved}
    clashes = sorted(n for n in names if n.lower() in taken or n.startswith("_"))
    if clashes:
        raise AddError(
            f"column {clashes[0]} cannot be a column of a {what}: the generated tables use "
            f"that name (reserved: {', '.join(sorted(taken))}, and names starting with _)"
        )
