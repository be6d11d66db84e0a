"""Spark SQL literals of the values dbt binds into a statement (a seed's rows) on the session
and connect methods, which run SQL text: dbt-spark's session wrapper writes every value as
``'<value>'`` unescaped (a quote in a seed cell breaks the statement) and numbers as floats (a
decimal beyond 15 significant digits loses its last ones)."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any


def quoted(text: str) -> str:
    """``text`` as a Spark SQL string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_literal(value: Any) -> str:
    """``value`` as the Spark SQL literal that reads back as the same value: NULL for None,
    exact decimals, ISO text for dates and zone-less times (cast by the statement)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return f"CAST({quoted(str(value))} AS DOUBLE)"
        return format(value, "f")
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"CAST({quoted(str(value))} AS DOUBLE)"
        return repr(value)
    if isinstance(value, dt.datetime):
        return quoted(value.strftime("%Y-%m-%d %H:%M:%S.%f"))
    if isinstance(value, dt.date):
        return quoted(value.isoformat())
    return quoted(str(value))
