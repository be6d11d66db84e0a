"""The change-event shape and its validation, shared by the generator, the reference and tests.

An event (one row of a change-event feed):

| field            | type           | meaning                                                    |
|------------------|----------------|------------------------------------------------------------|
| change_type      | string         | insert / update / delete (case-insensitive)                |
| event_ts         | timestamp      | when the change happened at the source                     |
| event_seq        | long, optional | tie-breaker within one event_ts (an LSN, say)              |
| column_names     | array<string>  | full row image: names (mandatory for insert and update)    |
| column_values    | array<string>  | full row image: values as text, cast to the target schema  |
| old_key_names    | array<string>  | key of the row before the change (mandatory for update and |
| old_key_values   | array<string>  | delete); the new key is in the image                       |
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

CHANGE_TYPES = ("insert", "update", "delete")


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

    def as_record(self) -> dict:
        """A JSON-friendly dict (event_ts as 'YYYY-MM-DD HH:MM:SS.ffffff')."""
        return {
            "change_type": self.change_type,
            "event_ts": None if self.event_ts is None else self.event_ts.isoformat(sep=" "),
            "event_seq": self.event_seq,
            "column_names": None if self.column_names is None else list(self.column_names),
            "column_values": None if self.column_values is None else list(self.column_values),
            "old_key_names": None if self.old_key_names is None else list(self.old_key_names),
            "old_key_values": None if self.old_key_values is None else list(self.old_key_values),
        }


@dataclass(frozen=True)
class TargetSchema:
    """Typed target of a source: ordered columns with Python casts, and the key columns."""

    columns: dict[str, str]  # name -> "int" | "string"
    keys: tuple[str, ...]

    def cast(self, column: str, text: str | None) -> int | str | None:
        """The typed value; raises ValueError when the text does not cast."""
        if text is None:
            return None
        return int(text) if self.columns[column] == "int" else text


def validate(event: ChangeEvent, schema: TargetSchema) -> str | None:
    """The quarantine reason of an event, or None when it can be applied."""
    kind = (event.change_type or "").lower()
    if kind not in CHANGE_TYPES:
        return f"unknown_change_type:{event.change_type}"
    if event.event_ts is None:
        return "missing_event_ts"
    if kind in ("insert", "update"):
        if not event.column_names or event.column_values is None:
            return "missing_image"
        if len(event.column_names) != len(event.column_values):
            return "image_length_mismatch"
        image = dict(zip(event.column_names, event.column_values, strict=True))
        for key in schema.keys:
            if image.get(key) is None:
                return f"null_key:{key}"
        for name, text in image.items():
            if name in schema.columns:
                try:
                    schema.cast(name, text)
                except ValueError:
                    return f"cast_failed:{name}"
    if kind in ("update", "delete"):
        if not event.old_key_names or event.old_key_values is None:
            return "missing_old_key"
        if len(event.old_key_names) != len(event.old_key_values):
            return "old_key_length_mismatch"
        old = dict(zip(event.old_key_names, event.old_key_values, strict=True))
        for key in schema.keys:
            if old.get(key) is None:
                return f"null_old_key:{key}"
            try:
                schema.cast(key, old[key])
            except ValueError:
                return f"cast_failed:old_{key}"
    return None
