"""The edge cases of the change-event semantics (docs/change-events.md, "Edge cases"): each case's
quarantine reasons and resolved state are written out here, then checked on the plain-Python
model and on the Spark pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
from change_event_support import initial_frame, run_incrementally, state_of

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.model import ChangeEvent, TargetSchema, fingerprint, validate
from spark_cdc.change_events.reference import StateRow, resolve_reference

SCHEMA = TargetSchema({"id": "int", "name": "string", "amount": "int"}, ("id",))
CONFIG = SourceConfig("cases", SCHEMA)
T0 = datetime(2026, 1, 1)
IMAGE = ("id", "name", "amount")


def at(second: int) -> datetime:
    return T0 + timedelta(seconds=second)


def event(kind, second, image=None, old=None, seq=None, names=IMAGE, old_names=("id",)):
    """An event; ``image`` and ``old`` are value tuples for ``names`` and ``old_names``."""
    return ChangeEvent(
        kind,
        None if second is None else at(second),
        seq,
        None if image is None else names,
        image,
        None if old is None else old_names,
        old,
    )


@dataclass
class Case:
    events: list[ChangeEvent]
    # Per event, in order: its quarantine reason, "duplicate", or None (applied).
    outcomes: list[str | None]
    # Resolved state: id -> (name, amount, created_at second, updated_at second, last change).
    state: dict[int, tuple]
    existing: dict[int, tuple] = field(default_factory=dict)


CASES = {
    "several defects: the first rule in the documented order wins": Case(
        [
            event("bogus", None),
            event("update", 1, seq=1),
            event("insert", 2, (None, "a", "x"), seq=2),
            event("insert", 3, ("y", "a", "x"), seq=3),
            event("update", 4, ("1", "a", "5"), ("z",), seq=4),
            event(None, 5, ("1", "a", "5"), seq=5),
            event("", 6, ("1", "a", "5"), seq=6),
        ],
        [
            "unknown_change_type:bogus",
            "missing_image",
            "null_key:id",
            "cast_failed:id",
            "cast_failed:old_id",
            "unknown_change_type:None",
            "unknown_change_type:",
        ],
        {},
    ),
    "an exact copy of an invalid event is quarantined again, of a valid one a duplicate": Case(
        [
            event("insert", 1, ("1", "a", "x")),
            event("insert", 1, ("1", "a", "x")),
            event("insert", 2, ("2", "b", "5")),
            event("insert", 2, ("2", "b", "5")),
        ],
        ["cast_failed:amount", "cast_failed:amount", None, "duplicate"],
        {2: ("b", 5, 2, 2, "insert")},
    ),
    "a padded, mixed-case change type is read as the trimmed lower-case word": Case(
        [event(" Insert ", 1, ("1", "a", "5")), event("UPDATE\t", 2, ("1", "b", "6"), ("1",))],
        [None, None],
        {1: ("b", 6, 1, 2, "update")},
    ),
    "empty arrays: an image or old key that is needed and empty is missing": Case(
        [
            event("insert", 1, (), names=()),
            event("update", 2, ("1", "a", "5"), (), old_names=()),
            event("delete", 3, (), ("2",), names=()),
            event("insert", 1, ("2", "b", "5"), seq=1),
        ],
        ["missing_image", "missing_old_key", None, None],
        {},
    ),
    "old key: a missing key column is null, extra names are ignored, the first repeat wins": Case(
        [
            event("insert", 1, ("1", "a", "5")),
            event("insert", 1, ("2", "b", "5"), seq=1),
            event("update", 2, ("1", "a2", "6"), ("a",), old_names=("name",)),
            event("update", 3, ("1", "a3", "7"), ("1", "zz"), old_names=("id", "name")),
            event("update", 4, ("2", "b4", "8"), ("2", "9"), old_names=("id", "id")),
        ],
        [None, None, "null_old_key:id", None, None],
        {1: ("a3", 7, 1, 3, "update"), 2: ("b4", 8, 1, 4, "update")},
    ),
    "a delete's image and an insert's old key are ignored, even malformed": Case(
        [
            event("insert", 1, ("1", "a", "5"), ("x", "y"), old_names=("id",)),
            event("insert", 1, ("2", "b", "5"), seq=1),
            event("delete", 2, ("oops",), ("2",), names=("id", "name")),
        ],
        [None, None, None],
        {1: ("a", 5, 1, 1, "insert")},
    ),
    "an existing row set after an event replaces what the event wrote": Case(
        [
            event("update", 5, ("1", "early", "1"), ("1",)),
            event("update", 20, ("1", "late", "2"), ("1",)),
            event("insert", 5, ("2", "early", "1")),
        ],
        [None, None, None],
        {1: ("late", 2, 0, 20, "update"), 2: ("kept", 9, 0, 10, "insert")},
        existing={1: ("initial", 0, 0, 10), 2: ("kept", 9, 0, 10)},
    ),
}


def _existing(case: Case) -> dict[tuple, StateRow]:
    return {
        (key,): StateRow(
            {"id": key, "name": name, "amount": amount}, at(created), at(updated), "insert"
        )
        for key, (name, amount, created, updated) in case.existing.items()
    }


def _expected_state(case: Case) -> dict[tuple, tuple]:
    return {
        (key,): (key, name, amount, at(created), at(updated), kind)
        for key, (name, amount, created, updated, kind) in case.state.items()
    }


@pytest.mark.parametrize("name", CASES)
def test_the_reference_follows_the_written_outcome(name):
    case = CASES[name]
    result = resolve_reference(_existing(case), case.events, SCHEMA)
    seen: set[str] = set()
    outcomes = []
    for item in case.events:
        reason = validate(item, SCHEMA)
        repeated = reason is None and fingerprint(item) in seen
        seen |= {fingerprint(item)} if reason is None else set()
        outcomes.append(reason or ("duplicate" if repeated else None))
    assert outcomes == case.outcomes
    state = {
        key: (
            key[0],
            row.values["name"],
            row.values["amount"],
            row.created_at,
            row.updated_at,
            row.last_change_type,
        )
        for key, row in result.state.items()
    }
    assert state == _expected_state(case)
    assert result.duplicates == case.outcomes.count("duplicate")


def test_the_spark_pipeline_follows_the_written_outcomes(spark):
    for name, case in CASES.items():
        initial = initial_frame(spark, _existing(case), SCHEMA)
        ledger, history = run_incrementally(spark, [[(1, case.events)]], CONFIG, initial)
        rows = ledger.select("event_fingerprint", "status", "quarantine_reason").collect()
        by_print: dict[str, list[str | None]] = {}
        for row in rows:
            outcome = {"applied": None, "duplicate": "duplicate"}.get(row.status)
            by_print.setdefault(row.event_fingerprint, []).append(
                outcome if row.status != "quarantined" else row.quarantine_reason
            )
        expected: dict[str, list[str | None]] = {}
        for item, outcome in zip(case.events, case.outcomes, strict=True):
            expected.setdefault(fingerprint(item), []).append(outcome)
        assert {k: sorted(v, key=str) for k, v in by_print.items()} == {
            k: sorted(v, key=str) for k, v in expected.items()
        }, name
        assert state_of(history, SCHEMA) == _expected_state(case), name
