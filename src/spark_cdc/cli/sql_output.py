"""How ``spark-cdc sql`` prints a statement's rows: an aligned table for people, JSON or CSV
(full values, types kept as text where JSON has none) for scripts. Machine formats print every
row unless ``--limit`` says otherwise (the table: 50); JSON is always valid JSON (NaN and the
infinities as the strings ``NaN``, ``Infinity``, ``-Infinity``) and names every column apart
(a repeated name gets ``#2``, ``#3``: ``select a.id, b.id`` gives ``id`` and ``id#2``)."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
from typing import Any

from spark_cdc.cli.options import text_table

FORMATS = ("table", "json", "csv")
TABLE_LIMIT = 50


def row_limit(limit: int | None, form: str) -> int:
    """Rows printed per statement: ``--limit`` when given (0: every row), else 50 for the
    table and every row for json and csv."""
    if limit is not None:
        return limit
    return TABLE_LIMIT if form == "table" else 0


def distinct_names(columns: list[str]) -> list[str]:
    """The column names with each repeat numbered (``id``, ``id#2``): keys of a JSON row."""
    seen: dict[str, int] = {}
    names = []
    for name in columns:
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return names


def _plain(value: Any) -> Any:
    """A value as JSON holds it: decimals as exact text, times in ISO 8601, bytes as hex,
    structs, maps and arrays as objects and lists."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _csv_cell(value: Any) -> str:
    plain = _plain(value)
    if plain is None:
        return ""
    if isinstance(plain, dict | list):
        return json.dumps(plain, sort_keys=False)
    if isinstance(plain, bool):
        return "true" if plain else "false"
    return str(plain)


def format_rows(
    statement: str, columns: list[str], rows: list[tuple], more: bool, form: str
) -> str:
    """One statement's ``rows`` (``more``: it had more than those) in ``form``."""
    if form == "json":  # one line per statement
        names = distinct_names(columns)
        document = {
            "statement": statement,
            "columns": names,
            "rows": [dict(zip(names, map(_plain, row), strict=True)) for row in rows],
            "truncated": more,
        }
        return json.dumps(document, allow_nan=False)
    if form == "csv":  # RFC 4180, a header line; NULL is an empty field
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_csv_cell(v) for v in row] for row in rows)
        return out.getvalue().rstrip("\n")
    table = text_table(columns, rows)
    return table + (f"\n(first {len(rows)} rows)" if more else "")
