"""Each Debezium connector family's position of a change: the order in which the source database
applied its changes, read from the message's ``source`` block (the family is ``source.connector``).

A position is a list of integers compared part by part (as Spark compares arrays and Python
tuples); it is the event's ``event_position`` and orders a key's changes before ``event_ts``
(change_events.resolve). Every part is a signed 64-bit integer.

- ``postgresql``: ``lsn``;
- ``mysql``, ``mariadb``: the binlog file's index (the digits after the file name's last dot),
  ``pos`` (the row event's offset), ``row`` (the row within the event; 0 when absent);
- ``sqlserver``: ``commit_lsn`` (three hex parts), ``change_lsn`` (three; zeros when absent: a
  snapshot read), ``event_serial_no`` (0 when absent);
- ``db2``: ``commit_lsn`` (three hex parts), ``change_lsn`` (three; zeros when absent);
- ``informix``: ``commit_lsn``, ``change_lsn`` (0 when absent);
- ``oracle``: ``commit_scn`` (``scn`` when absent: a snapshot read), ``scn``, ``ssn`` (0 when
  absent);
- ``mongodb``: ``ts_ms``, ``ord`` (0 when absent).

A message of one of these families whose required part (the first) is missing, or whose parts
are not integers of that shape, has no position and the landing error
``invalid_position:<family>`` (the event is quarantined). A message of another family (or
without a ``connector``) has no position: its changes are ordered by ``event_ts`` then
``event_seq`` (``lsn``), and two changes of one key that these do not order are ambiguous.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

LONG_MAX = 2**63 - 1
_DIGITS = re.compile(r"-?[0-9]+", re.ASCII)
_HEX_PART = re.compile(r"[0-9A-Fa-f]{1,16}", re.ASCII)
_BINLOG_INDEX = re.compile(r".*\.([0-9]+)", re.ASCII | re.DOTALL)


@dataclass(frozen=True)
class Part:
    """One part of a position: the ``source`` fields it is read from (the first present),
    how (``number``, ``binlog_file``: the file's index, ``hex_lsn``: ``width`` hex numbers
    separated by colons), and whether a message must have it."""

    fields: tuple[str, ...]
    how: str = "number"
    required: bool = False
    width: int = 1


FAMILIES: dict[str, tuple[Part, ...]] = {
    "postgresql": (Part(("lsn",), required=True),),
    "mysql": (
        Part(("file",), "binlog_file", required=True),
        Part(("pos",), required=True),
        Part(("row",)),
    ),
    "sqlserver": (
        Part(("commit_lsn",), "hex_lsn", required=True, width=3),
        Part(("change_lsn",), "hex_lsn", width=3),
        Part(("event_serial_no",)),
    ),
    "db2": (
        Part(("commit_lsn",), "hex_lsn", required=True, width=3),
        Part(("change_lsn",), "hex_lsn", width=3),
    ),
    "informix": (Part(("commit_lsn",), required=True), Part(("change_lsn",))),
    "oracle": (Part(("commit_scn", "scn"), required=True), Part(("scn",)), Part(("ssn",))),
    "mongodb": (Part(("ts_ms",), required=True), Part(("ord",))),
}
FAMILIES["mariadb"] = FAMILIES["mysql"]


def _text(value: Any) -> str | None:
    """A source field as Spark reads it into text (a string as it is, anything else as its JSON
    text), spaces trimmed."""
    if value is None:
        return None
    return (value if isinstance(value, str) else json.dumps(value)).strip(" ")


def _part_values(part: Part, source: Mapping[str, Any]) -> list[int] | None:
    """The part's integers, zeros when it is absent and not required, None when unreadable."""
    text = next((_text(source.get(f)) for f in part.fields if source.get(f) is not None), None)
    if text is None:
        return None if part.required else [0] * part.width
    if part.how == "binlog_file":
        found = _BINLOG_INDEX.fullmatch(text)
        numbers = None if found is None else [int(found.group(1))]
    elif part.how == "hex_lsn":
        pieces = text.split(":")
        readable = len(pieces) == part.width and all(_HEX_PART.fullmatch(p) for p in pieces)
        numbers = [int(p, 16) for p in pieces] if readable else None
    else:
        numbers = [int(text)] if _DIGITS.fullmatch(text) else None
    if numbers is None or any(not -LONG_MAX - 1 <= n <= LONG_MAX for n in numbers):
        return None
    return numbers


def position_of(source: Any) -> tuple[tuple[int, ...] | None, str | None]:
    """(position, landing error) of a message's ``source`` block (plain Python)."""
    if not isinstance(source, Mapping):
        return None, None
    family = source.get("connector")
    parts = FAMILIES.get(family) if isinstance(family, str) else None
    if parts is None:
        return None, None
    position: list[int] = []
    for part in parts:
        values = _part_values(part, source)
        if values is None:
            return None, f"invalid_position:{family}"
        position += values
    return tuple(position), None


def _spark_part(part: Part, source: Column) -> Column:
    """The part's integers (array<bigint>) in Spark: zeros when absent and not required, null
    when unreadable (a null element, or a null array for a missing required part)."""
    text = F.coalesce(*(F.trim(source[f]) for f in part.fields))
    if part.how == "binlog_file":
        index = F.regexp_extract(text, r"\.([0-9]+)$", 1)
        numbers = F.array(F.when(index != "", index).try_cast("bigint"))
    elif part.how == "hex_lsn":
        pieces = F.split(text, ":")
        readable = (F.size(pieces) == part.width) & F.forall(
            pieces, lambda p: p.rlike(r"^[0-9A-Fa-f]{1,16}$")
        )
        # conv gives the unsigned value; above 2^63-1 the cast fails (a null element)
        numbers = F.when(
            readable, F.transform(pieces, lambda p: F.conv(p, 16, 10).try_cast("bigint"))
        ).otherwise(F.array(F.lit(None).cast("bigint")))
    else:
        numbers = F.array(F.when(text.rlike(r"^-?[0-9]+$"), text.try_cast("bigint")))
    if part.required:
        return F.when(text.isNotNull(), numbers)
    zeros = F.array(*(F.lit(0).cast("bigint") for _ in range(part.width)))
    return F.when(text.isNull(), zeros).otherwise(numbers)


def position_columns(source: Column) -> tuple[Column, Column]:
    """(event_position, landing error) of a ``source`` block read as map<string,string>."""
    family = source["connector"]
    position = F.lit(None).cast("array<bigint>")
    error = F.lit(None).cast("string")
    for name, parts in FAMILIES.items():
        values = F.concat(*(_spark_part(p, source) for p in parts))
        readable = values.isNotNull() & F.forall(values, lambda v: v.isNotNull())
        position = F.when(family == name, F.when(readable, values)).otherwise(position)
        error = F.when((family == name) & ~readable, F.lit(f"invalid_position:{name}")).otherwise(
            error
        )
    return position, error
