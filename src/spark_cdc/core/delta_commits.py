"""Marks that Delta commits carry in ``userMetadata``, read back as the table's state holds them.

A Spark session's ``spark.databricks.delta.commitInfo.userMetadata`` goes into every commit the
session makes while it is set, DDL included: dbt's ``on_schema_change`` or a discovered column's
``ALTER TABLE`` can commit, carrying a mark, before the model's rows are written. A mark is made
true by the commit that writes the rows, so readers of marks look at these commits only. And a
``RESTORE`` to version N undoes the commits after N: their marks no longer count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

Mark = TypeVar("Mark")

# A model's first build or full refresh, and its incremental writes. DDL (ADD COLUMNS, CHANGE
# COLUMN, SET TBLPROPERTIES, ...), OPTIMIZE, VACUUM and RESTORE change no row of their own.
DATA_OPERATIONS = frozenset(
    {
        "WRITE",
        "MERGE",
        "CREATE TABLE AS SELECT",
        "REPLACE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE AS SELECT",
    }
)


def writes_rows(operation: str | None) -> bool:
    """Whether a commit of this Delta ``operation`` wrote the table's rows."""
    return operation in DATA_OPERATIONS


def live_marks(history: Iterable[Any], mark_of: Callable[[str | None], Mark | None]) -> list:
    """(version, mark) of every commit of ``history`` (``describe history`` rows) that wrote rows
    with a mark and that the table's state still holds: replayed oldest first, a ``RESTORE``
    going back to the marks of the version it restored (by number or by timestamp)."""
    ordered = sorted(history, key=lambda row: row.version)
    after: dict[int, list] = {}
    live: list = []
    for row in ordered:
        if row.operation == "RESTORE":
            parameters = row.operationParameters or {}
            target = parameters.get("version")
            if target is None and parameters.get("timestamp"):
                target = _version_at(ordered, str(parameters["timestamp"]))
            if target is not None:
                live = list(after.get(int(target), []))
        elif writes_rows(row.operation):
            mark = mark_of(row.userMetadata)
            if mark is not None:
                live = [*live, (int(row.version), mark)]
        after[int(row.version)] = live
    return live


def _version_at(history: list, stamp: str) -> int | None:
    """The latest version committed at or before ``stamp`` (how Delta resolves a timestamp;
    history times are zone-less UTC, a stamp with an offset is converted); None when the text is
    not a timestamp."""
    try:
        moment = datetime.fromisoformat(stamp.strip())
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    earlier = [row.version for row in history if row.timestamp <= moment]
    return max(earlier) if earlier else None
