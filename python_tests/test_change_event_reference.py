"""The written change-event semantics, on the articles' worked examples and edge cases."""

from __future__ import annotations

from datetime import datetime

from spark_cdc.change_events.model import ChangeEvent, TargetSchema, fingerprint, validate
from spark_cdc.change_events.reference import StateRow, resolve_reference

PEOPLE = TargetSchema(columns={"id": "string", "name": "string"}, keys=("id",))
VALUES = TargetSchema(columns={"id": "string", "value": "string"}, keys=("id",))


def ts(second: int) -> datetime:
    return datetime(2026, 1, 1, 0, 0, second)


def insert(at, key, name, seq=None, schema_field="name"):
    return ChangeEvent("insert", ts(at), seq, ("id", schema_field), (key, name))


def update(at, old, key, name, seq=None, schema_field="name"):
    return ChangeEvent("update", ts(at), seq, ("id", schema_field), (key, name), ("id",), (old,))


def delete(at, old, seq=None):
    return ChangeEvent("delete", ts(at), seq, None, None, ("id",), (old,))


def _state(result, field="name"):
    return {k[0]: (v.values[field], v.created_at.second) for k, v in result.state.items()}


def test_alice_bob_becomes_angela_carol():
    existing = {
        ("id1",): StateRow({"id": "id1", "name": "Alice"}, ts(0), ts(0), "insert"),
        ("id2",): StateRow({"id": "id2", "name": "Bob"}, ts(0), ts(0), "insert"),
    }
    events = [update(1, "id1", "id1", "Angela"), delete(2, "id2"), insert(3, "id2", "Carol")]
    result = resolve_reference(existing, events, PEOPLE)
    assert _state(result) == {"id1": ("Angela", 0), "id2": ("Carol", 3)}


def test_walkthrough_five_events_any_batching_keep_created_at_from_the_insert():
    batch1 = [insert(0, "A", "inserted", schema_field="value")]
    batch2 = [
        update(1, "A", "A", "updated", schema_field="value"),
        insert(2, "B", "inserted", schema_field="value"),
    ]
    batch3 = [update(3, "A", "A", "updated 2nd time", schema_field="value"), delete(4, "B")]
    orders = [
        [batch1, batch2, batch3],
        [batch1, batch2 + batch3],
        [batch1 + batch2 + batch3],
        [batch3, batch2, batch1],
        [batch1, batch2, batch3, batch2],  # re-ingested batch: duplicates apply once
        [batch1 + batch1, batch2, batch3],
    ]
    for batches in orders:
        events = [e for batch in batches for e in batch]
        result = resolve_reference({}, events, VALUES)
        assert _state(result, "value") == {"A": ("updated 2nd time", 0)}
        assert result.state[("A",)].updated_at == ts(3)


def test_key_change_chain_carries_created_at():
    events = [insert(1, "A", "a"), update(2, "A", "B", "b"), update(3, "B", "C", "c")]
    result = resolve_reference({}, events, PEOPLE)
    assert _state(result) == {"C": ("c", 1)}


def test_delete_then_reinsert_and_missing_keys():
    events = [
        insert(1, "A", "a"),
        delete(2, "A"),
        insert(3, "A", "again"),
        update(4, "Z", "Y", "from nowhere"),  # update of a missing key acts as an insert
        delete(5, "Q"),  # delete of a missing key is a no-op
    ]
    result = resolve_reference({}, events, PEOPLE)
    assert _state(result) == {"A": ("again", 3), "Y": ("from nowhere", 4)}


def test_insert_of_existing_key_is_an_upsert_keeping_created_at():
    result = resolve_reference({}, [insert(1, "A", "a"), insert(2, "A", "b")], PEOPLE)
    assert _state(result) == {"A": ("b", 1)}


def test_ties_are_broken_by_event_seq_and_true_ambiguity_is_reported():
    tie = [update(5, "A", "A", "second", seq=2), update(5, "A", "A", "first", seq=1)]
    result = resolve_reference({}, [insert(1, "A", "a"), *tie], PEOPLE)
    assert _state(result) == {"A": ("second", 1)}
    assert result.ambiguous == set()
    clash = [update(5, "A", "A", "x", seq=1), update(5, "A", "A", "y", seq=1)]
    result = resolve_reference({}, [insert(1, "A", "a"), *clash], PEOPLE)
    assert result.ambiguous == {(("A",), ts(5), 1)}
    last = max(clash, key=fingerprint)  # fingerprint order: deterministic
    assert _state(result) == {"A": (last.column_values[1], 1)}


def test_malformed_events_are_quarantined_with_reasons():
    bad = [
        ChangeEvent("merge", ts(1), None, ("id", "name"), ("A", "a")),
        ChangeEvent("insert", ts(1), None, ("id", "name"), (None, "a")),
        ChangeEvent("insert", ts(1), None, ("id", "name"), ("A",)),
        ChangeEvent("update", ts(1), None, None, None, ("id",), ("A",)),
        ChangeEvent("delete", ts(1), None, None, None, None, None),
    ]
    reasons = [validate(event, PEOPLE) for event in bad]
    assert reasons == [
        "unknown_change_type:merge",
        "null_key:id",
        "image_length_mismatch",
        "missing_image",
        "missing_old_key",
    ]
    result = resolve_reference({}, [*bad, insert(2, "B", "b")], PEOPLE)
    assert len(result.quarantined) == 5 and result.applied == 1
