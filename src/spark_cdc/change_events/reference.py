"""Plain-Python, one-event-at-a-time model of change-event resolution (the written semantics).

The resolved state equals applying all valid events one by one in (event_ts, event_seq) order to
the existing rows (which count as inserted at their stored timestamp):

- insert of a new key creates the row; insert of an existing key replaces its values and keeps
  its created_at;
- update finds the row by its old key and replaces it with the new image; the key may change (the
  row moves; created_at follows it, also along chains A -> B -> C; a row already at the new key is
  replaced); update of a missing key acts as an insert of the image;
- delete removes the row by its old key; delete of a missing key is a no-op;
- exact duplicate events apply once;
- events with equal (event_ts, event_seq) touching one key with different content are ambiguous:
  they are applied in the order of their canonical text (deterministic) and reported.

Columns absent from an image are NULL in that image. Invalid events (model.validate) are skipped
and reported as quarantined.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from spark_cdc.change_events.model import ChangeEvent, TargetSchema, validate


@dataclass
class StateRow:
    """One current row: typed values, created_at, updated_at, last change type."""

    values: dict
    created_at: datetime
    updated_at: datetime
    last_change_type: str


@dataclass
class ReferenceResult:
    """The resolved state and what happened to the input events."""

    state: dict[tuple, StateRow]
    applied: int = 0
    duplicates: int = 0
    quarantined: list[tuple[ChangeEvent, str]] = field(default_factory=list)
    ambiguous: list[tuple] = field(default_factory=list)


def _canonical(event: ChangeEvent) -> str:
    return json.dumps(event.as_record(), sort_keys=True)


def _image(event: ChangeEvent, schema: TargetSchema) -> dict:
    given = dict(zip(event.column_names or (), event.column_values or (), strict=True))
    return {c: schema.cast(c, given.get(c)) for c in schema.columns}


def _key(values: dict, schema: TargetSchema) -> tuple:
    return tuple(values[k] for k in schema.keys)


def _old_key(event: ChangeEvent, schema: TargetSchema) -> tuple:
    old = dict(zip(event.old_key_names or (), event.old_key_values or (), strict=True))
    return tuple(schema.cast(k, old[k]) for k in schema.keys)


def resolve_reference(
    existing: dict[tuple, StateRow], events: list[ChangeEvent], schema: TargetSchema
) -> ReferenceResult:
    """Apply ``events`` (any order, any batching) to ``existing`` per the module's rules."""
    result = ReferenceResult(state={k: StateRow(**vars(v)) for k, v in existing.items()})
    unique: dict[str, ChangeEvent] = {}
    for event in events:
        reason = validate(event, schema)
        if reason is not None:
            result.quarantined.append((event, reason))
            continue
        text = _canonical(event)
        if text in unique:
            result.duplicates += 1
        else:
            unique[text] = event
    ordered = sorted(
        unique.items(), key=lambda item: (item[1].event_ts, item[1].event_seq or 0, item[0])
    )
    seen_positions: dict[tuple, set] = {}
    for text, event in ordered:
        kind = event.change_type.lower()
        touched = (
            _old_key(event, schema) if kind != "insert" else _key(_image(event, schema), schema)
        )
        position = (event.event_ts, event.event_seq or 0, touched)
        seen_positions.setdefault(position, set()).add(text)
        if len(seen_positions[position]) == 2:
            result.ambiguous.append(position)
        _apply(result.state, event, kind, schema)
        result.applied += 1
    return result


def _apply(
    state: dict[tuple, StateRow], event: ChangeEvent, kind: str, schema: TargetSchema
) -> None:
    ts = event.event_ts
    if kind == "delete":
        state.pop(_old_key(event, schema), None)
        return
    image = _image(event, schema)
    new_key = _key(image, schema)
    if kind == "update":
        moved = state.pop(_old_key(event, schema), None)
        if moved is not None:
            state[new_key] = StateRow(image, moved.created_at, ts, "update")
            return
    current = state.get(new_key)
    created = current.created_at if current is not None else ts
    state[new_key] = StateRow(image, created, ts, kind)
