"""The change-event shape, its fingerprint and its validation (shared by Spark code and reference).

An event (one row of a change-event feed):

| field            | type           | meaning                                                    |
|------------------|----------------|------------------------------------------------------------|
| change_type      | string         | insert / update / delete (case-insensitive)                |
| event_ts         | timestamp      | when the change happened at the source (UTC, zone-less)    |
| event_seq        | long, optional | tie-breaker within one event_ts (an LSN, say); null = 0    |
| column_names     | array<string>  | full row image: names (mandatory for insert and update)    |
| column_values    | array<string>  | full row image: values as text, cast to the target schema  |
| old_key_names    | array<string>  | key of the row before the change (mandatory for update and |
| old_key_values   | array<string>  | delete); the new key is in the image                       |
| event_position   | array<long>,   | the source's own position (a Debezium connector family's,  |
|                  | optional       | debezium.positions), compared part by part: orders a key's |
|                  |                | changes before event_ts; null = none                       |
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from spark_cdc.change_events.casts import try_cast
from spark_cdc.core.type_text import type_text_problem

CHANGE_TYPES = ("insert", "update", "delete")
# A change type of a feed whose source applies truncates (a Debezium source's setting).
TRUNCATE = "truncate"
# What a source does with truncates: apply (every live row closed) or refuse (the run fails).
TRUNCATE_CHOICES = ("apply", "refuse")
# A Kafka tombstone (the null message after a delete): no change, skipped with this reason.
TOMBSTONE = "tombstone"
# Trimmed around a change type (ASCII whitespace; Spark's trim() alone removes only spaces).
CHANGE_TYPE_PADDING = " \t\n\r\f\v"
EPOCH = datetime(1970, 1, 1)
# Separators of the fingerprint's canonical text (control characters absent from real values).
FIELD_SEP, ITEM_SEP, NULL_ITEM, NULL_FIELD = "\x1e", "\x1f", "\x00", "\x02"


class ChangeEventConfigError(ValueError):
    """A source configuration that cannot be used."""


@dataclass(frozen=True)
class ChangeEvent:
    """One change event, as it arrives (values still text)."""

    change_type: str | None
    event_ts: datetime | None
    event_seq: int | None
    column_names: tuple[str, ...] | None
    column_values: tuple[str | None, ...] | None
    old_key_names: tuple[str, ...] | None = None
    old_key_values: tuple[str | None, ...] | None = None
    # Why the landing could not read the line as an event (change_events.landing), if it could not.
    landing_error: str | None = None
    # Image columns the source did not send (normalize.UNCHANGED_COLUMNS): previous value kept.
    unchanged_columns: tuple[str, ...] | None = None
    # The source's own position of the change, compared part by part (None: none).
    event_position: tuple[int, ...] | None = None

    def as_record(self) -> dict:
        """A JSON-friendly dict (event_ts as 'YYYY-MM-DD HH:MM:SS.ffffff')."""
        record = {
            "change_type": self.change_type,
            "event_ts": None if self.event_ts is None else self.event_ts.isoformat(sep=" "),
            "event_seq": self.event_seq,
            "column_names": None if self.column_names is None else list(self.column_names),
            "column_values": None if self.column_values is None else list(self.column_values),
            "old_key_names": None if self.old_key_names is None else list(self.old_key_names),
            "old_key_values": None if self.old_key_values is None else list(self.old_key_values),
        }
        if self.event_position is not None:
            record["event_position"] = list(self.event_position)
        return record


def _joined(items: tuple | None) -> str:
    if items is None:
        return NULL_FIELD
    return ITEM_SEP.join(NULL_ITEM if item is None else item for item in items)


def fingerprint(event: ChangeEvent) -> str:
    """SHA-256 of the event's canonical text: equal for exact duplicates, the last tie-breaker.

    Canonical text: change_type, event_ts as epoch microseconds, event_seq, then the four arrays
    (items joined by U+001F, a null item as U+0000), fields joined by U+001E, a null field as
    U+0002, and for an event with a position, its parts joined by U+001F as a last field.
    spark_cdc.change_events.normalize computes the same in Spark.
    """
    micros = (
        None if event.event_ts is None else (event.event_ts - EPOCH) // timedelta(microseconds=1)
    )
    fields = [
        NULL_FIELD if event.change_type is None else event.change_type,
        NULL_FIELD if micros is None else str(micros),
        NULL_FIELD if event.event_seq is None else str(event.event_seq),
        _joined(event.column_names),
        _joined(event.column_values),
        _joined(event.old_key_names),
        _joined(event.old_key_values),
    ]
    if event.event_position is not None:
        fields.append(ITEM_SEP.join(str(part) for part in event.event_position))
    return hashlib.sha256(FIELD_SEP.join(fields).encode()).hexdigest()


@dataclass(frozen=True)
class TargetSchema:
    """Typed target of a source: ordered columns (name -> Spark SQL type) and the key columns."""

    columns: dict[str, str]
    keys: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ChangeEventConfigError("a change-event source needs at least one key column")
        missing = [key for key in self.keys if key not in self.columns]
        if missing:
            raise ChangeEventConfigError(f"key columns not in the target columns: {missing}")

    @property
    def nonkeys(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.keys)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> TargetSchema:
        """From YAML: ``columns`` (name -> Spark type) and ``key_columns`` (list of names)."""
        columns = raw.get("columns")
        if not isinstance(columns, Mapping) or not columns:
            raise ChangeEventConfigError("'columns' must map column names to Spark types")
        keys = raw.get("key_columns")
        if isinstance(keys, str):
            keys = [keys]
        if not keys:
            raise ChangeEventConfigError("'key_columns' must list the key column names")
        for column, kind in columns.items():
            problem = type_text_problem(str(column), kind)
            if problem:
                raise ChangeEventConfigError(f"'columns': {problem}")
        return cls({str(k): str(v).lower() for k, v in columns.items()}, tuple(map(str, keys)))

    def with_columns(self, extra: Mapping[str, str]) -> TargetSchema:
        """This schema with ``extra`` columns (name -> Spark type) after its own."""
        return TargetSchema({**self.columns, **extra}, self.keys)

    def cast(self, column: str, text: str | None) -> Any:
        """The typed value (change_events.casts: the plain-Python model of Spark's try_cast).

        Raises ValueError when the text does not cast."""
        if text is None:
            return None
        return try_cast(text, self.columns[column])


def first_occurrences(names: tuple[str, ...], values: tuple[str | None, ...]) -> dict:
    """Name -> value, the first occurrence winning (as Spark's array_position finds it)."""
    mapping: dict = {}
    for name, value in zip(names, values, strict=True):
        mapping.setdefault(name, value)
    return mapping


def change_kind(change_type: str | None) -> str:
    """The change type as the rules read it: ASCII whitespace trimmed, lower-cased."""
    return (change_type or "").strip(CHANGE_TYPE_PADDING).lower()


def validate(event: ChangeEvent, schema: TargetSchema, truncates: bool = False) -> str | None:
    """The quarantine reason of an event, or None when it can be applied.

    Checks, first failure wins: the landing's error (a line it could not read); a tombstone
    (``tombstone``: skipped, not an error); change type (a truncate needs only its event_ts);
    event_ts; for insert/update the image (present,
    names and values of equal length, no repeated name, non-null keys, every target column
    castable but the unchanged ones — in target column order); for update/delete the old key
    (present, equal lengths, non-null and castable key values). Image columns unknown to the
    target are ignored."""
    if event.landing_error is not None:
        return event.landing_error
    kind = change_kind(event.change_type)
    if kind == TOMBSTONE:
        return TOMBSTONE
    if kind not in CHANGE_TYPES and not (truncates and kind == TRUNCATE):
        return f"unknown_change_type:{event.change_type}"
    if event.event_ts is None:
        return "missing_event_ts"
    if kind in ("insert", "update"):
        if not event.column_names or event.column_values is None:
            return "missing_image"
        if len(event.column_names) != len(event.column_values):
            return "image_length_mismatch"
        if len(set(event.column_names)) != len(event.column_names):
            return "duplicate_column_name"
        image = dict(zip(event.column_names, event.column_values, strict=True))
        for key in schema.keys:
            if image.get(key) is None:
                return f"null_key:{key}"
        for name in schema.columns:
            if name in (event.unchanged_columns or ()):
                continue
            try:
                schema.cast(name, image.get(name))
            except ValueError:
                return f"cast_failed:{name}"
    if kind in ("update", "delete"):
        if not event.old_key_names or event.old_key_values is None:
            return "missing_old_key"
        if len(event.old_key_names) != len(event.old_key_values):
            return "old_key_length_mismatch"
        old = first_occurrences(event.old_key_names, event.old_key_values)
        for key in schema.keys:
            if old.get(key) is None:
                return f"null_old_key:{key}"
        for key in schema.keys:
            try:
                schema.cast(key, old[key])
            except ValueError:
                return f"cast_failed:old_{key}"
    return None
