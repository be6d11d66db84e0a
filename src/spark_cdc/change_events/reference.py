"""Plain-Python, one-event-at-a-time model of change-event resolution (the written semantics).

The resolved state equals applying all valid events one by one in position order to the
existing rows. An event's position is (event_position, event_ts, event_seq — null counts as
0 —, fingerprint), event_position compared part by part, an event without one before every
event with one (a source's own position, a Debezium connector family's: it decides before the
time); an existing row counts as set at (no event_position, its updated_at, before any event of
that instant), with its stored values and created_at:

- insert of a new key creates the row; insert of an existing key replaces its values and keeps
  its created_at;
- update finds the row by its old key and replaces it with the new image; the key may change (the
  row moves; created_at follows it, also along chains A -> B -> C; a row already at the new key is
  replaced); update of a missing key acts as an insert of the image;
- delete removes the row by its old key; delete of a missing key is a no-op;
- exact duplicate events (same fingerprint) apply once;
- a key change a source sends as two events (Debezium: a delete of the old key and a create of
  the new one at one position) is one update: in a feed with event_position, the valid events at
  one (event_ts, event_seq, event_position), one of the last two set, that are exactly a delete
  and an insert of two different keys are merged so, whichever batches they came in;
- two different events at one (event_position, event_ts, event_seq) touching one key are
  ambiguous: they apply in fingerprint order (deterministic) and the (key, event_ts, event_seq)
  is reported.

Columns absent from an image are NULL in that image; a column the image lists as unchanged
(``unchanged_columns``) keeps the previous value of the row the event takes: the old key's row
for an update that moves a live row, else the key's own live row; NULL when there is none. A
source with ``ignore_null_updates`` lists every NULL non-key column of an update so (partial
updates). A
truncate (when the source applies them) deletes every live row at its position.

With tracked columns (a source's ``track_history`` / ``track_history_except``), a version
that would follow a live version of the same row (the key's last version, not deleted, same
created_at) with equal tracked columns (NULL equal to NULL) updates that version in place
instead: it keeps its valid_from and created_at and takes the new values, change type and
``changed_at`` (the time of its latest change; a version's own valid_from otherwise).

Columns absent from an image are NULL in that image. Invalid events (model.validate) are skipped
and reported as quarantined. Every action also leaves a version in the key's history: the new
image for an insert/update, a deleted marker for a delete (also for a delete of a missing key and
for the old key of a key-changing update).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from spark_cdc.change_events.model import (
    TOMBSTONE,
    TRUNCATE,
    ChangeEvent,
    TargetSchema,
    change_kind,
    fingerprint,
    first_occurrences,
    validate,
)

BEFORE_ANY_EVENT = float("-inf")


@dataclass
class StateRow:
    """One current row: typed values, created_at, updated_at, last change type."""

    values: dict
    created_at: datetime
    updated_at: datetime
    last_change_type: str


@dataclass(frozen=True)
class Version:
    """One action on one key, in the key's history."""

    valid_from: datetime
    is_deleted: bool
    values: dict | None
    created_at: datetime | None
    change_type: str
    changed_at: datetime | None = None  # with tracked columns: its latest change


@dataclass
class ReferenceResult:
    """The resolved state, each key's history and what happened to the input events."""

    state: dict[tuple, StateRow]
    history: dict[tuple, list[Version]] = field(default_factory=dict)
    tracked: tuple[str, ...] | None = None  # see the module doc
    applied: int = 0  # valid events applied (a key change sent as two events counts two)
    duplicates: int = 0
    skipped: int = 0  # tombstones: no change
    quarantined: list[tuple[ChangeEvent, str]] = field(default_factory=list)
    ambiguous: set[tuple] = field(default_factory=set)


def image_of(event: ChangeEvent, schema: TargetSchema) -> dict:
    """The event's typed image over the target columns (absent and unchanged columns are
    None)."""
    given = dict(zip(event.column_names or (), event.column_values or (), strict=True))
    unchanged = event.unchanged_columns or ()
    return {c: None if c in unchanged else schema.cast(c, given.get(c)) for c in schema.columns}


def key_of(values: dict, schema: TargetSchema) -> tuple:
    return tuple(values[k] for k in schema.keys)


def old_key_of(event: ChangeEvent, schema: TargetSchema) -> tuple:
    old = first_occurrences(event.old_key_names or (), event.old_key_values or ())
    return tuple(schema.cast(k, old[k]) for k in schema.keys)


def touched_keys(event: ChangeEvent, schema: TargetSchema, live: dict | None = None) -> list[tuple]:
    """Keys an event acts on: the image key (insert/update) and the old key (update/delete);
    a truncate's are the ``live`` keys."""
    kind = change_kind(event.change_type)
    if kind == TRUNCATE:
        return list(live or {})
    keys = [] if kind == "delete" else [key_of(image_of(event, schema), schema)]
    if kind != "insert" and old_key_of(event, schema) not in keys:
        keys.append(old_key_of(event, schema))
    return keys


def position_key(position: tuple[int, ...] | None) -> tuple[int, ...]:
    """A position's sort key: none before any, then part by part (as Spark orders arrays with
    nulls first)."""
    return (0,) if position is None else (1, *position)


def resolve_reference(
    existing: dict[tuple, StateRow],
    events: list[ChangeEvent],
    schema: TargetSchema,
    truncates: bool = False,
    ignore_null_updates: bool = False,
    tracked: tuple[str, ...] | None = None,
) -> ReferenceResult:
    """Apply ``events`` (any order, any batching) to ``existing`` per the module's rules;
    ``ignore_null_updates``: an update's NULL non-key columns count as unchanged; ``tracked``:
    the columns whose change opens a version (None: every change does)."""
    result = ReferenceResult(state={}, tracked=tracked)
    unique: dict[str, ChangeEvent] = {}
    for event in events:
        reason = validate(event, schema, truncates)
        if reason == TOMBSTONE:
            result.skipped += 1
        elif reason is not None:
            result.quarantined.append((event, reason))
        elif fingerprint(event) in unique:
            result.duplicates += 1
        else:
            unique[fingerprint(event)] = event
    if any(e.event_position is not None for e in events):
        before = len(unique)
        unique = paired_key_changes(unique, schema)
        # both halves of a paired key change are applied events (each is a ledger row)
        result.applied += before - len(unique)
    items: list[tuple] = [
        ((0,), row.updated_at, BEFORE_ANY_EVENT, "", key, row) for key, row in existing.items()
    ]
    items += [
        (position_key(e.event_position), e.event_ts, e.event_seq or 0, fp, None, e)
        for fp, e in unique.items()
    ]
    items.sort(key=lambda item: item[:4])
    touched_at: dict[tuple, set[str]] = {}
    for position, ts, seq, fp, key, item in items:
        if isinstance(item, StateRow):
            _restore(result, key, item)
            continue
        for touched in touched_keys(item, schema, result.state):
            fingerprints = touched_at.setdefault((touched, position, ts, seq), set())
            fingerprints.add(fp)
            if len(fingerprints) > 1:
                result.ambiguous.add((touched, ts, seq))
        _apply(result, item, schema, ignore_null_updates)
        result.applied += 1
    return result


def paired_key_changes(unique: dict[str, ChangeEvent], schema: TargetSchema) -> dict:
    """``unique`` (fingerprint -> valid event) with each key change sent as two events merged:
    the events at one (event_ts, event_seq, event_position), one of the last two set, that are
    exactly a delete and an insert of different keys become one update from the delete's old
    key to the insert's image (keyed by the insert's fingerprint)."""
    at: dict[tuple, list[str]] = {}
    for fp, e in unique.items():
        if e.event_ts is not None and (e.event_seq is not None or e.event_position is not None):
            at.setdefault((e.event_ts, e.event_seq, e.event_position), []).append(fp)
    paired = dict(unique)
    for fps in at.values():
        kinds = sorted(change_kind(unique[fp].change_type) for fp in fps)
        if kinds != ["delete", "insert"]:
            continue
        delete, insert = sorted(fps, key=lambda fp: change_kind(unique[fp].change_type))
        gone, came = unique[delete], unique[insert]
        if old_key_of(gone, schema) == key_of(image_of(came, schema), schema):
            continue
        del paired[delete]
        paired[insert] = replace(
            came,
            change_type="update",
            old_key_names=gone.old_key_names,
            old_key_values=gone.old_key_values,
        )
    return paired


def _restore(result: ReferenceResult, key: tuple, row: StateRow) -> None:
    _set(result, key, StateRow(**vars(row)))


def _set(result: ReferenceResult, key: tuple, row: StateRow) -> None:
    result.state[key] = row
    versions = result.history.setdefault(key, [])
    changed = row.updated_at if result.tracked is not None else None
    last = versions[-1] if versions else None
    if (
        result.tracked is not None
        and last is not None
        and not last.is_deleted
        and last.created_at == row.created_at
        and all(last.values[c] == row.values[c] for c in result.tracked)
    ):
        # only untracked columns changed: the live version is updated in place
        versions[-1] = replace(
            last, values=row.values, change_type=row.last_change_type, changed_at=changed
        )
        return
    versions.append(
        Version(row.updated_at, False, row.values, row.created_at, row.last_change_type, changed)
    )


def _remove(result: ReferenceResult, key: tuple, ts: datetime) -> StateRow | None:
    result.history.setdefault(key, []).append(Version(ts, True, None, None, "delete"))
    return result.state.pop(key, None)


def _apply(
    result: ReferenceResult, event: ChangeEvent, schema: TargetSchema, ignore_nulls: bool = False
) -> None:
    kind, ts = change_kind(event.change_type), event.event_ts
    if kind == "delete":
        _remove(result, old_key_of(event, schema), ts)
        return
    if kind == TRUNCATE:
        for key in list(result.state):
            result.history.setdefault(key, []).append(Version(ts, True, None, None, TRUNCATE))
            del result.state[key]
        return
    image = image_of(event, schema)
    new_key = key_of(image, schema)
    moves = kind == "update" and old_key_of(event, schema) != new_key
    unchanged = list(event.unchanged_columns or ())
    if ignore_nulls and kind == "update":
        unchanged += [c for c in schema.nonkeys if image[c] is None and c not in unchanged]
    if unchanged:
        # the row the update takes: the old key's when it is live, else the key's own
        previous = result.state.get(old_key_of(event, schema)) if moves else None
        previous = previous or result.state.get(new_key)
        for column in unchanged:
            image[column] = None if previous is None else previous.values[column]
    if moves:
        moved = _remove(result, old_key_of(event, schema), ts)
        if moved is not None:
            _set(result, new_key, StateRow(image, moved.created_at, ts, kind))
            return
    current = result.state.get(new_key)
    created = current.created_at if current is not None else ts
    _set(result, new_key, StateRow(image, created, ts, kind))
