"""The Spark resolver (normalize, resolve, ledger and history increments) against the semantics."""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timedelta

import pytest
from change_event_support import (
    HIGH,
    expected_state,
    expected_versions,
    initial_frame,
    run_incrementally,
    state_of,
    status_counts,
    versions_of,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from spark_cdc.change_events import linked_keys
from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.feed import feed_frame
from spark_cdc.change_events.model import (
    ChangeEvent,
    ChangeEventConfigError,
    TargetSchema,
    fingerprint,
    validate,
)
from spark_cdc.change_events.normalize import REASON, normalize_events
from spark_cdc.change_events.pipeline import (
    history_increment,
    initial_versions,
    ledger_increment,
)
from spark_cdc.change_events.reference import StateRow, resolve_reference
from spark_cdc.change_events.resolve import resolve_feed
from spark_cdc.dbt_models.change_events import refuse_truncates
from spark_cdc.dbt_models.settings import SettingsError

PEOPLE = SourceConfig("people", TargetSchema({"id": "string", "name": "string"}, ("id",)))
VALUES = SourceConfig("values", TargetSchema({"id": "string", "value": "string"}, ("id",)))
ROWS = TargetSchema({"id": "int", "name": "string", "amount": "int"}, ("id",))
T0 = datetime(2026, 1, 1)
UNSENT = "__debezium_unavailable_value"


def at(second: int) -> datetime:
    return T0 + timedelta(seconds=second)


def test_alice_and_bob_become_angela_and_carol(spark):
    existing = {
        ("id1",): StateRow({"id": "id1", "name": "Alice"}, at(0), at(0), "insert"),
        ("id2",): StateRow({"id": "id2", "name": "Bob"}, at(0), at(0), "insert"),
    }
    events = [
        ChangeEvent("update", at(1), None, ("id", "name"), ("id1", "Angela"), ("id",), ("id1",)),
        ChangeEvent("delete", at(2), None, None, None, ("id",), ("id2",)),
        ChangeEvent("insert", at(3), None, ("id", "name"), ("id2", "Carol")),
    ]
    initial = initial_frame(spark, existing, PEOPLE.schema)
    _, history = run_incrementally(spark, [[(1, events)]], PEOPLE, initial)
    assert state_of(history, PEOPLE.schema) == {
        ("id1",): ("id1", "Angela", at(0), at(1), "update"),
        ("id2",): ("id2", "Carol", at(3), at(3), "insert"),
    }


def test_a_late_event_on_one_key_re_resolves_the_key_a_later_move_took_its_row_to(spark):
    """Run 1: k1 inserted at 10, moved to k2 at 30 (k2 inherits created_at 10), k2 updated at
    40. Run 2 brings only a late delete of k1 at 20: the move at 30 then moves no live row, so
    k2's versions at 30 and 40 start anew at 30, although run 2's events never name k2; an
    untouched key k3 keeps its one version."""

    def insert(second, key):
        return ChangeEvent("insert", at(second), None, ("id", "name"), (key, key))

    run_1 = [
        insert(10, "k1"),
        ChangeEvent("update", at(30), None, ("id", "name"), ("k2", "moved"), ("id",), ("k1",)),
        ChangeEvent("update", at(40), None, ("id", "name"), ("k2", "renamed"), ("id",), ("k2",)),
        insert(25, "k3"),
    ]
    run_2 = [ChangeEvent("delete", at(20), None, None, None, ("id",), ("k1",))]
    _, history = run_incrementally(spark, [[(1, run_1)], [(2, run_2)]], PEOPLE, marks=True)
    expected = resolve_reference({}, [*run_1, *run_2], PEOPLE.schema)
    assert state_of(history, PEOPLE.schema) == expected_state(expected, PEOPLE.schema)
    assert state_of(history, PEOPLE.schema)[("k2",)][2] == at(30)  # created_at: its own move
    assert versions_of(history, PEOPLE.schema) == expected_versions(expected, PEOPLE.schema)
    k3 = history.where("id = 'k3'").select("process_id").collect()
    assert [row.process_id for row in k3] == ["run-0"]  # not re-resolved by run 2


@pytest.mark.parametrize("linked_on_the_driver", [True, False], ids=["driver", "spark"])
def test_chained_moves_reached_by_a_late_event_re_resolve_the_same_keys_either_way(
    spark, monkeypatch, linked_on_the_driver
):
    """Run 1 moves k1 -> k2 -> k3 (and k5 -> k6 apart); run 2 brings a late delete of k1 and
    an update of k6. The keys moves link are found on the driver from the moves' key hashes,
    or (above linked_keys.DRIVER_LINKED_MOVES moves) in Spark: both give the reference's versions,
    and neither re-resolves k4, which no move links."""
    if not linked_on_the_driver:
        monkeypatch.setattr(linked_keys, "DRIVER_LINKED_MOVES", 0)

    def insert(second, key):
        return ChangeEvent("insert", at(second), None, ("id", "name"), (key, key))

    def move(second, old, new):
        return ChangeEvent("update", at(second), None, ("id", "name"), (new, old), ("id",), (old,))

    run_1 = [
        insert(10, "k1"),
        insert(12, "k4"),
        insert(14, "k5"),
        move(30, "k1", "k2"),
        move(35, "k2", "k3"),
        move(36, "k5", "k6"),
        ChangeEvent("update", at(40), None, ("id", "name"), ("k3", "renamed"), ("id",), ("k3",)),
    ]
    run_2 = [
        ChangeEvent("delete", at(20), None, None, None, ("id",), ("k1",)),
        ChangeEvent("update", at(50), None, ("id", "name"), ("k6", "six"), ("id",), ("k6",)),
    ]
    _, history = run_incrementally(spark, [[(1, run_1)], [(2, run_2)]], PEOPLE, marks=True)
    expected = resolve_reference({}, [*run_1, *run_2], PEOPLE.schema)
    assert state_of(history, PEOPLE.schema) == expected_state(expected, PEOPLE.schema)
    assert versions_of(history, PEOPLE.schema) == expected_versions(expected, PEOPLE.schema)
    assert state_of(history, PEOPLE.schema)[("k3",)][2] == at(30)  # created_at: its own move
    k4 = history.where("id = 'k4'").select("process_id").collect()
    assert [row.process_id for row in k4] == ["run-0"]  # not re-resolved by run 2


def test_a_key_change_that_leaves_a_column_unchanged_takes_the_old_keys_value(spark):
    """A TOASTed column left unchanged by updates that move the key (Debezium's placeholder):
    1 -> 2 -> 3 in one batch keeps 1's note along the chain; in a later run 3 -> 4 takes it
    from the history; a move from a key that is not live (9 -> 5) keeps 5's own note; a move
    into a new key from nothing (8 -> 6) has no previous value (NULL)."""

    def move(second, old, new, amount):
        names, values = ("id", "name", "amount"), (str(new), UNSENT, str(amount))
        old_key = (str(old),)
        return ChangeEvent(
            "update", at(second), None, names, values, ("id",), old_key, None, ("name",)
        )

    existing = {
        (1,): StateRow({"id": 1, "name": "long note", "amount": 1}, at(0), at(0), "insert"),
        (5,): StateRow({"id": 5, "name": "five", "amount": 5}, at(0), at(0), "insert"),
    }
    run_1 = [move(10, 1, 2, 2), move(20, 2, 3, 3), move(30, 9, 5, 6)]
    run_2 = [move(40, 3, 4, 4), move(50, 8, 6, 7)]
    config = SourceConfig("rows", ROWS)
    initial = initial_frame(spark, existing, ROWS)
    ledger, history = run_incrementally(spark, [[(1, run_1)], [(2, run_2)]], config, initial)
    state = state_of(history, ROWS)
    assert {key: values[:3] for key, values in state.items()} == {
        (4,): (4, "long note", 4),
        (5,): (5, "five", 6),
        (6,): (6, None, 7),
    }
    assert state[(4,)][3] == at(0)  # created_at followed the row along the chain
    expected = resolve_reference(existing, [*run_1, *run_2], ROWS)
    assert state == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)
    assert status_counts(ledger) == {"applied": 5}


def _walkthrough_batches(prefix: str) -> list[list[ChangeEvent]]:
    def event(second, kind, key, value):
        image = None if value is None else (("id", "value"), (prefix + key, value))
        old = None if kind == "INSERT" else (("id",), (prefix + key,))
        return ChangeEvent(kind, at(second), None, *(image or (None, None)), *(old or (None, None)))

    return [
        [event(0, "INSERT", "A", "inserted")],
        [event(1, "UPDATE", "A", "updated"), event(2, "INSERT", "B", "inserted")],
        [event(3, "UPDATE", "A", "updated 2nd time"), event(4, "DELETE", "B", None)],
    ]


def test_walkthrough_five_events_under_every_batching_and_order(spark):
    """Each scenario of the walkthrough runs in its own key space, all through the same runs."""
    scenarios = {
        "in order": lambda b: [b[0], b[1], b[2]],
        "2 and 3 together": lambda b: [b[0], b[1] + b[2]],
        "all together": lambda b: [b[0] + b[1] + b[2]],
        "reverse order": lambda b: [b[2], b[1], b[0]],
        "batch 2 re-ingested": lambda b: [b[0], b[1], b[2], b[1]],
        "duplicated insert": lambda b: [b[0] + b[0], b[1], b[2]],
    }
    runs: list[list] = [[] for _ in range(4)]
    for index, (name, order) in enumerate(scenarios.items()):
        for run, batch in enumerate(order(_walkthrough_batches(f"{name}/"))):
            runs[run].append((run * 100 + index, batch))
    ledger, history = run_incrementally(spark, runs, VALUES)
    state = state_of(history, VALUES.schema)
    for name in scenarios:
        assert {k: v for k, v in state.items() if k[0].startswith(name + "/")} == {
            (f"{name}/A",): (f"{name}/A", "updated 2nd time", at(0), at(3), "update")
        }, name
    counts = status_counts(ledger)
    assert counts == {"applied": 5 * len(scenarios), "duplicate": 3}


def test_spark_validation_and_fingerprint_match_the_model(spark):
    schema = ROWS
    events = [
        ChangeEvent("Insert", at(1), 7, ("id", "name", "amount"), ("1", "a", "5")),
        ChangeEvent("merge", at(1), None, ("id",), ("1",)),
        ChangeEvent(None, at(1), None, ("id",), ("1",)),
        ChangeEvent("insert", None, None, ("id",), ("1",)),
        ChangeEvent("insert", at(1), None, None, None),
        ChangeEvent("insert", at(1), None, ("id", "name"), ("1",)),
        ChangeEvent("insert", at(1), None, ("id", "id"), ("1", "2")),
        ChangeEvent("insert", at(1), None, ("name",), ("a",)),
        ChangeEvent("insert", at(1), None, ("id", "amount"), ("1", "lots")),
        ChangeEvent("insert", at(1), None, ("id", "amount"), ("x", "1")),
        ChangeEvent("update", at(1), None, ("id",), ("1",)),
        ChangeEvent("delete", at(1), None, None, None, ("id", "id"), ("1",)),
        ChangeEvent("delete", at(1), None, None, None, ("other",), ("1",)),
        ChangeEvent("delete", at(1), None, None, None, ("id",), ("one",)),
        ChangeEvent("update", at(1), 3, ("id", "name", "extra"), ("2", None, "x"), ("id",), ("1",)),
    ]
    rows = normalize_events(feed_frame(spark, [(0, events)]), schema).collect()
    by_fingerprint = {row["event_fingerprint"]: row["quarantine_reason"] for row in rows}
    assert by_fingerprint == {fingerprint(e): validate(e, schema) for e in events}
    assert None in by_fingerprint.values() and len(set(by_fingerprint.values())) == 14


def _event(draw, keys: list[int], second: int) -> ChangeEvent:
    kind = draw(st.sampled_from(["insert", "update", "move", "delete", "bad"]))
    seq = draw(st.one_of(st.none(), st.integers(0, 2)))
    key = draw(st.sampled_from(keys))
    image = (("id", "name", "amount"), (str(key), draw(st.sampled_from("xyz")), str(second)))
    if kind == "insert":
        return ChangeEvent(draw(st.sampled_from(["insert", "INSERT"])), at(second), seq, *image)
    if kind == "delete":
        return ChangeEvent("delete", at(second), seq, None, None, ("id",), (str(key),))
    if kind == "bad":
        return ChangeEvent("insert", at(second), seq, ("id", "amount"), (str(key), "n/a"))
    old = draw(st.sampled_from(keys)) if kind == "move" else key
    # an unchanged-TOAST update: the columns it leaves unchanged keep the row's previous value
    left = tuple(c for c in ("name", "amount") if draw(st.integers(0, 3)) == 0) or None
    names, values = image
    values = tuple(UNSENT if n in (left or ()) else v for n, v in zip(names, values, strict=True))
    return ChangeEvent("update", at(second), seq, names, values, ("id",), (str(old),), None, left)


@st.composite
def streams(draw, stream: int) -> tuple[dict, list[list[ChangeEvent]]]:
    """Existing rows and batches (delivery order) of one stream in its own key space."""
    keys = [stream * 100 + k for k in range(draw(st.integers(2, 5)))]
    # existing rows set at any time, also after events of their key (an existing row counts
    # as set at its updated_at)
    existing = {
        (key,): StateRow(
            {"id": key, "name": "old", "amount": 0}, at(0), at(draw(st.integers(0, 8))), "insert"
        )
        for key in draw(st.sets(st.sampled_from(keys)))
    }
    events: list[ChangeEvent] = []
    for _ in range(draw(st.integers(1, 12))):
        if events and draw(st.integers(0, 9)) == 0:
            events.append(draw(st.sampled_from(events)))  # exact duplicate
        else:
            events.append(_event(draw, keys, draw(st.integers(1, 8))))  # ties, any order
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(events) - 1)), max_size=3)))
    batches = [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True)]
    batches = [b for b in batches if b]
    random.Random(draw(st.integers(0, 999))).shuffle(batches)  # late and out-of-order batches
    return existing, batches


def with_null_updates(data, generated: list) -> list:
    """The streams with their updates' values NULL at random (partial updates)."""

    def nulled(event: ChangeEvent) -> ChangeEvent:
        if event.change_type != "update":
            return event
        gone = data.draw(st.sets(st.sampled_from(["name", "amount"])))
        values = tuple(
            None if n in gone else v
            for n, v in zip(event.column_names, event.column_values, strict=True)
        )
        return dataclasses.replace(event, column_values=values)

    return [
        (rows, [[nulled(e) for e in batch] for batch in batches]) for rows, batches in generated
    ]


def with_a_truncate(data, generated: list) -> list:
    """The streams with a truncate at a random time in the last batch of one of them."""
    stream = data.draw(st.integers(0, len(generated) - 1))
    rows, batches = generated[stream]
    truncate = ChangeEvent("truncate", at(data.draw(st.integers(1, 8))), None, None, None)
    return [
        *generated[:stream],
        (rows, [*batches[:-1], [*batches[-1], truncate]]),
        *generated[stream + 1 :],
    ]


def _as_runs(generated: list) -> tuple[dict, list[list], list[ChangeEvent]]:
    """Streams (existing rows, batches) as (every stream's existing rows, runs: the n-th run
    takes each stream's n-th batch under a batch id of its own, every event)."""
    existing = {key: row for rows, _ in generated for key, row in rows.items()}
    runs: list[list] = [[] for _ in range(max(len(batches) for _, batches in generated))]
    for stream, (_, batches) in enumerate(generated):
        for run, batch in enumerate(batches):
            runs[run].append((run * 100 + stream, batch))
    every_event = [e for _, batches in generated for batch in batches for e in batch]
    return existing, runs, every_event


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_incremental_and_full_runs_equal_the_sequential_reference(spark, data):
    """Several independent streams per example (one key space each) go through the same runs."""
    config = SourceConfig("rows", ROWS)
    generated = [data.draw(streams(stream)) for stream in range(1, 9)]
    existing, runs, every_event = _as_runs(generated)
    expected = resolve_reference(existing, every_event, ROWS)
    initial = initial_frame(spark, existing, ROWS)

    ledger, history = run_incrementally(spark, runs, config, initial)
    assert state_of(history, ROWS) == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)
    counts = status_counts(ledger)
    assert counts.get("applied", 0) == expected.applied
    assert counts.get("duplicate", 0) == expected.duplicates
    assert counts.get("quarantined", 0) == len(expected.quarantined)
    ambiguous = history.where("is_ambiguous").select("id", "valid_from", "event_seq").collect()
    assert {((r[0],), r[1], r[2] or 0) for r in ambiguous} == expected.ambiguous

    all_at_once = [[batch for run in runs for batch in run]]
    _, rebuilt = run_incrementally(spark, all_at_once, config, initial)
    columns = [c for c in history.columns if c not in ("process_id", "row_hash")]
    assert rebuilt.select(columns).exceptAll(history.select(columns)).isEmpty()
    assert history.select(columns).exceptAll(rebuilt.select(columns)).isEmpty()


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_the_one_shot_resolver_equals_the_reference_and_quarantines_events_as_they_came(
    spark, data
):
    """resolve.resolve_feed (what the benchmarks time): every version as the reference gives it;
    a malformed event comes back with the feed's own columns and its reason."""
    generated = [data.draw(streams(stream)) for stream in range(1, 5)]
    existing = {key: row for rows, _ in generated for key, row in rows.items()}
    malformed = [
        ChangeEvent("upsert", at(5), None, ("id", "name", "amount"), ("101", "x", "1")),
        ChangeEvent("update", at(6), 2, None, None, ("id",), ("102",)),
    ]
    batches = [*(b for _, stream in generated for b in stream), malformed]
    events = [e for batch in batches for e in batch]
    expected = resolve_reference(existing, events, ROWS)
    rows = initial_frame(spark, existing, ROWS)
    initial = None if rows is None else initial_versions(rows, ROWS, "p")
    feed = feed_frame(spark, list(enumerate(batches)))

    versions, quarantined = resolve_feed(feed, ROWS, HIGH, initial)
    assert state_of(versions, ROWS) == expected_state(expected, ROWS)
    assert versions_of(versions, ROWS) == expected_versions(expected, ROWS)
    got = sorted(
        (r.change_type, r.event_ts, r.column_names, r.column_values, r.old_key_values, r[REASON])
        for r in quarantined.collect()
    )
    want = sorted(
        (
            e.change_type,
            e.event_ts,
            None if e.column_names is None else list(e.column_names),
            None if e.column_values is None else list(e.column_values),
            None if e.old_key_values is None else list(e.old_key_values),
            reason,
        )
        for e, reason in expected.quarantined
    )
    assert got == want and len(got) >= len(malformed)


def test_events_later_than_the_allowed_lateness_are_quarantined_the_same_way_in_a_rebuild(spark):
    config = SourceConfig("rows", ROWS, allowed_lateness=timedelta(seconds=10))

    def insert(second: int, key: int) -> ChangeEvent:
        return ChangeEvent("insert", at(second), None, ("id", "name"), (str(key), f"v{second}"))

    batches = [
        (1, [insert(100, 1), insert(101, 2)]),
        (2, [insert(95, 1), insert(200, 3)]),  # 95 >= 101 - 10: still in time
        (3, [insert(150, 2), insert(90, 1)]),  # watermark 200 - 10: both too late
        (4, [insert(195, 2)]),  # in time, earlier than batch 3's events
    ]
    ledger, history = run_incrementally(spark, [[b] for b in batches], config)
    late = ledger.where("quarantine_reason = 'too_late'").select("event_ts").collect()
    assert sorted(r[0] for r in late) == [at(90), at(150)]
    assert status_counts(ledger) == {"applied": 5, "quarantined": 2}
    state = state_of(history, ROWS)
    assert state[(1,)][3:5] == (at(95), at(100)) and state[(2,)][1] == "v195"

    rebuilt_ledger, rebuilt = run_incrementally(spark, [batches], config)
    columns = [c for c in history.columns if c not in ("process_id", "row_hash")]
    assert rebuilt.select(columns).exceptAll(history.select(columns)).isEmpty()
    assert rebuilt_ledger.where("status = 'quarantined'").count() == 2


def test_a_run_without_new_batches_changes_nothing(spark):
    config = SourceConfig("rows", ROWS)
    batch = (1, [ChangeEvent("insert", at(1), None, ("id",), ("1",))])
    ledger, history = run_incrementally(spark, [[batch]], config)
    again = ledger_increment(feed_frame(spark, [batch]), ledger, config, "again")
    assert again.isEmpty()
    assert history_increment(ledger, history, None, config, HIGH, "again").isEmpty()
    assert history.where(F.col("is_current")).count() == 1


def test_images_with_different_columns_union_by_name(spark):
    """A column absent from an image is null in that image; unknown columns are ignored."""
    events = [
        ChangeEvent("insert", at(1), None, ("amount", "id", "name"), ("5", "1", "a")),
        ChangeEvent("update", at(2), None, ("id", "name"), ("1", "b"), ("id",), ("1",)),
        ChangeEvent("insert", at(3), None, ("id", "nickname", "amount"), ("2", "x", "7")),
    ]
    _, history = run_incrementally(spark, [[(1, events)]], SourceConfig("rows", ROWS))
    assert state_of(history, ROWS) == {
        (1,): (1, "b", None, at(1), at(2), "update"),
        (2,): (2, None, 7, at(3), at(3), "insert"),
    }
    expected = resolve_reference({}, events, ROWS)
    assert state_of(history, ROWS) == expected_state(expected, ROWS)


def test_evolving_column_sets_follow_the_registry_rules(spark):
    """With evolve_columns, new image columns become text columns (older versions null); a
    column set clashing by case with a known column is quarantined; runs equal a full build."""
    batch_1 = [
        ChangeEvent("insert", at(1), None, ("id", "name", "amount"), ("1", "a", "5")),
        ChangeEvent("insert", at(2), None, ("id", "name", "amount"), ("2", "b", "6")),
    ]
    batch_2 = [
        ChangeEvent(
            "update", at(3), None, ("id", "name", "amount", "tier"), ("1", "a", "7", "gold"),
            ("id",), ("1",),
        ),
        ChangeEvent("insert", at(4), None, ("id", "name", "tier", "note"), ("3", "c", "s", "x")),
    ]  # fmt: skip
    batch_3 = [
        ChangeEvent("update", at(5), None, ("id", "Tier"), ("2", "bronze"), ("id",), ("2",)),
        ChangeEvent("update", at(6), None, ("id", "amount"), ("3", "9"), ("id",), ("3",)),
    ]
    config = SourceConfig("rows", ROWS, evolve_columns=True)
    ledger, history = run_incrementally(
        spark, [[(1, batch_1)], [(2, batch_2)], [(3, batch_3)]], config
    )
    _, full = run_incrementally(spark, [[(1, batch_1), (2, batch_2), (3, batch_3)]], config)
    evolved = ROWS.with_columns({"tier": "string", "note": "string"})
    expected = {
        (1,): (1, "a", 7, "gold", None, at(1), at(3), "update"),
        (2,): (2, "b", 6, None, None, at(2), at(2), "insert"),
        (3,): (3, None, 9, None, None, at(4), at(6), "update"),
    }
    assert state_of(history, evolved) == state_of(full, evolved) == expected
    # Runs that know the history's mark find new columns in the later batches only.
    _, marked = run_incrementally(
        spark, [[(1, batch_1)], [(2, batch_2)], [(3, batch_3)]], config, marks=True
    )
    assert marked.columns == history.columns
    assert versions_of(marked, evolved) == versions_of(full, evolved)
    valid = [e for e in batch_1 + batch_2 + batch_3 if "Tier" not in e.column_names]
    assert expected_state(resolve_reference({}, valid, evolved), evolved) == expected
    assert versions_of(history, evolved) == versions_of(full, evolved)
    clash = ledger.where("status = 'quarantined'").select("quarantine_reason").collect()
    assert [row[0] for row in clash] == ["name_collision:$.tier:$.Tier"]
    # without evolve_columns the same stream ignores the undeclared columns
    _, plain = run_incrementally(
        spark, [[(1, batch_1), (2, batch_2), (3, batch_3)]], SourceConfig("rows", ROWS)
    )
    assert "tier" not in plain.columns


def test_partial_updates_keep_the_values_their_nulls_leave_out(spark):
    """With ignore_null_updates an update's NULL non-key column keeps the row's value (also
    across a key change, from the old key's row); an update of a missing key has none to keep;
    an insert's NULLs are values. Without it, every NULL is a value."""

    def update(second, key, name, amount, old=None):
        values = (str(key), name, None if amount is None else str(amount))
        old_key = (str(key if old is None else old),)
        return ChangeEvent(
            "update", at(second), None, ("id", "name", "amount"), values, ("id",), old_key
        )

    events = [
        ChangeEvent("insert", at(1), None, ("id", "name", "amount"), ("1", "a", "5")),
        update(2, 1, None, 6),
        update(3, 1, "b", None),
        update(4, 2, None, 7, old=1),  # a key change: 1's name follows the row
        update(5, 9, None, 1),  # no row at 9: nothing to keep
        ChangeEvent("insert", at(6), None, ("id", "name", "amount"), ("3", None, "3")),
        update(7, 3, "c", None),
    ]
    partial = SourceConfig("rows", ROWS, ignore_null_updates=True)
    _, history = run_incrementally(spark, [[(1, events[:3])], [(2, events[3:])]], partial)
    values = {key: row[:3] for key, row in state_of(history, ROWS).items()}
    assert values == {(2,): (2, "b", 7), (9,): (9, None, 1), (3,): (3, "c", 3)}
    assert state_of(history, ROWS)[(2,)][3] == at(1)  # created_at followed the row
    expected = resolve_reference({}, events, ROWS, ignore_null_updates=True)
    assert state_of(history, ROWS) == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)

    _, plain = run_incrementally(spark, [[(1, events)]], SourceConfig("rows", ROWS))
    values = {key: row[:3] for key, row in state_of(plain, ROWS).items()}
    assert values == {(2,): (2, None, 7), (9,): (9, None, 1), (3,): (3, "c", None)}


@settings(
    max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_partial_updates_by_incremental_and_full_runs_equal_the_reference(spark, data):
    """The random streams of the test above, their updates' values NULL at random, with
    ignore_null_updates: incremental runs, one run and the reference agree."""
    config = SourceConfig("rows", ROWS, ignore_null_updates=True)
    generated = with_null_updates(data, [data.draw(streams(stream)) for stream in range(1, 7)])
    existing, runs, every_event = _as_runs(generated)
    expected = resolve_reference(existing, every_event, ROWS, ignore_null_updates=True)
    initial = initial_frame(spark, existing, ROWS)
    _, history = run_incrementally(spark, runs, config, initial)
    assert state_of(history, ROWS) == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)
    _, rebuilt = run_incrementally(spark, [[b for run in runs for b in run]], config, initial)
    columns = [c for c in history.columns if c not in ("process_id", "row_hash")]
    assert rebuilt.select(columns).exceptAll(history.select(columns)).isEmpty()
    assert history.select(columns).exceptAll(rebuilt.select(columns)).isEmpty()


def test_a_plain_feeds_truncate_closes_every_live_row_when_the_source_applies_them(spark):
    """A plain source with ``truncate: apply``: a truncate event (its change type in any case
    and padding) deletes every row live at its time, also one a later run's late event made
    live before it; without the setting it is quarantined."""
    events = [
        ChangeEvent("insert", at(1), None, ("id", "name", "amount"), ("1", "a", "1")),
        ChangeEvent("insert", at(2), None, ("id", "name", "amount"), ("2", "b", "2")),
        ChangeEvent(" TRUNCATE ", at(5), None, None, None),
        ChangeEvent("insert", at(6), None, ("id", "name", "amount"), ("3", "c", "3")),
    ]
    late = [ChangeEvent("insert", at(4), None, ("id", "name", "amount"), ("4", "d", "4"))]
    applying = SourceConfig.from_mapping(
        "rows", {"columns": ROWS.columns, "key_columns": ["id"], "truncate": "apply"}
    )
    ledger, history = run_incrementally(spark, [[(1, events)], [(2, late)]], applying)
    state = state_of(history, ROWS)
    assert {key: row[:3] for key, row in state.items()} == {(3,): (3, "c", 3)}
    truncated = history.where("change_type = 'truncate'").select("id").collect()
    assert sorted(r.id for r in truncated) == [1, 2, 4]  # 4 arrived late, live before it
    expected = resolve_reference({}, [*events, *late], ROWS, truncates=True)
    assert state == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)
    assert status_counts(ledger) == {"applied": 5}

    ledger, history = run_incrementally(spark, [[(1, events)]], SourceConfig("rows", ROWS))
    assert set(state_of(history, ROWS)) == {(1,), (2,), (3,)}
    reasons = {r[REASON] for r in ledger.collect()} - {None}
    assert reasons == {"unknown_change_type: TRUNCATE "}  # the change type as it came


@pytest.mark.parametrize(
    ("text", "setting"), [(None, None), ("none", None), ("Apply", "apply"), (" refuse", "refuse")]
)
def test_the_truncate_setting_is_read_in_any_case(text, setting):
    raw = {"columns": ROWS.columns, "key_columns": ["id"], "truncate": text}
    assert SourceConfig.from_mapping("rows", raw).truncate == setting


def test_an_unknown_truncate_setting_is_refused():
    raw = {"columns": ROWS.columns, "key_columns": ["id"], "truncate": "ignore"}
    with pytest.raises(ChangeEventConfigError, match="truncate must be apply, refuse or none"):
        SourceConfig.from_mapping("rows", raw)


def test_a_plain_source_that_refuses_truncates_names_the_batch_and_the_setting(spark):
    # padded as normalization trims a change type: a tab and a line end, not only spaces
    feed = feed_frame(spark, [(7, [ChangeEvent("\t Truncate\n", at(5), None, None, None)])])
    refused = "batch 7 holds a truncate of the table .* the source's truncate is 'refuse'"
    with pytest.raises(SettingsError, match=refused):
        refuse_truncates(feed, "rows", "truncate")
    kept = feed_frame(spark, [(8, [ChangeEvent("insert", at(6), None, ("id",), ("1",))])])
    refuse_truncates(kept, "rows", "truncate")  # nothing to refuse


def test_a_paired_key_change_with_nulls_keeps_the_old_keys_values_under_partial_updates(spark):
    """A key change sent as a delete and an insert at one position is one update: with
    ignore_null_updates its NULLs keep the old key's values, on Spark as in the reference."""
    names = ("id", "name", "amount")
    events = [
        ChangeEvent("insert", at(1), None, names, ("1", "a", "5"), event_position=(10,)),
        ChangeEvent("delete", at(2), None, None, None, ("id",), ("1",), event_position=(20,)),
        ChangeEvent("insert", at(2), None, names, ("2", None, "6"), event_position=(20,)),
    ]
    partial = SourceConfig("rows", ROWS, ignore_null_updates=True)
    _, history = run_incrementally(spark, [[(1, events[:2])], [(2, events[2:])]], partial)
    state = state_of(history, ROWS)
    assert state == {(2,): (2, "a", 6, at(1), at(2), "update")}
    expected = resolve_reference({}, events, ROWS, ignore_null_updates=True)
    assert state == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)


# A feed ordered by columns of its own: a file's day, its number and the line's offset (text).
SEQUENCE = ("file_day", "file_no", "offset")
DAY_ZERO = 20_454  # 2026-01-01, in days since 1970-01-01


def _sequenced_feed(spark, batches):
    """The feed of ``batches`` whose events carry their (day, file, offset) position in
    event_position: as a feed that has those three columns instead (the position dropped)."""
    feed = feed_frame(spark, batches)
    days = F.date_add(F.lit("1970-01-01").cast("date"), F.col("event_position")[0].cast("int"))
    return feed.select(
        "*",
        days.alias("file_day"),
        F.col("event_position")[1].alias("file_no"),
        F.col("event_position")[2].cast("string").alias("offset"),
    ).drop("event_position")


@settings(
    max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_feed_ordered_by_its_own_columns_equals_the_reference_by_position(spark, data):
    """sequence_by (AUTO CDC's sequence_by struct): the random streams above, every event at a
    (day, file, offset) that agrees with its event_ts and orders the events of one second at
    random; incremental runs and one run resolve them in the order of those columns, as the
    reference orders event_position."""
    config = SourceConfig("rows", ROWS, sequence_by=SEQUENCE)

    def placed(event: ChangeEvent) -> ChangeEvent:
        # the columns agree with event_ts (a later second, a later day) and order the events
        # of one second, which event_ts cannot tell apart
        day = DAY_ZERO + event.event_ts.second
        position = (day, data.draw(st.integers(0, 2)), data.draw(st.integers(0, 3)))
        return dataclasses.replace(event, event_position=position)

    generated = [data.draw(streams(stream)) for stream in range(1, 5)]
    generated = [
        (rows, [[placed(e) for e in batch] for batch in batches]) for rows, batches in generated
    ]
    existing, runs, every_event = _as_runs(generated)
    expected = resolve_reference(existing, every_event, ROWS)
    initial = initial_frame(spark, existing, ROWS)
    ledger, history = run_incrementally(spark, runs, config, initial, to_feed=_sequenced_feed)
    assert state_of(history, ROWS) == expected_state(expected, ROWS)
    assert versions_of(history, ROWS) == expected_versions(expected, ROWS)
    assert status_counts(ledger).get("applied", 0) == expected.applied
    all_at_once = [[b for run in runs for b in run]]
    _, rebuilt = run_incrementally(spark, all_at_once, config, initial, to_feed=_sequenced_feed)
    columns = [c for c in history.columns if c not in ("process_id", "row_hash")]
    assert rebuilt.select(columns).exceptAll(history.select(columns)).isEmpty()
    assert history.select(columns).exceptAll(rebuilt.select(columns)).isEmpty()


def test_a_feed_ordered_by_its_own_columns_by_hand(spark):
    """Three updates of one key at one event_ts: their (day, file, offset) decides, not their
    fingerprints (offset 10 after offset 9: numbers, not texts); an offset that is not an
    integer is quarantined as invalid_sequence:offset; a column that orders nothing, or one
    the feed does not have, is refused."""
    ts = at(5)
    names = ("id", "name", "amount")
    rows = [
        ("insert", ts, None, list(names), ["1", "a", "1"], None, None, 1, 1, "2"),
        ("update", ts, None, list(names), ["1", "c", "3"], ["id"], ["1"], 1, 1, "10"),
        ("update", ts, None, list(names), ["1", "b", "2"], ["id"], ["1"], 1, 1, "9"),
        ("update", ts, None, list(names), ["1", "x", "0"], ["id"], ["1"], 1, 1, "7a"),
    ]
    feed = spark.createDataFrame(
        rows,
        "change_type string, event_ts timestamp, event_seq bigint, column_names array<string>, "
        "column_values array<string>, old_key_names array<string>, "
        "old_key_values array<string>, _batch_id bigint, file_no int, offset string",
    )
    config = SourceConfig("rows", ROWS, sequence_by=("file_no", "offset"))
    ledger = ledger_increment(feed, None, config, "run").localCheckpoint()
    reasons = sorted(str(r["quarantine_reason"]) for r in ledger.collect())
    assert reasons == ["None", "None", "None", "invalid_sequence:offset"]
    history = history_increment(ledger, None, None, config, HIGH, "run")
    assert state_of(history, ROWS)[(1,)][:3] == (1, "c", 3)
    assert history.where("is_ambiguous").count() == 0
    for wrong in (("name",), ("column_values",)):
        with pytest.raises(ChangeEventConfigError):
            ledger_increment(feed, None, SourceConfig("rows", ROWS, sequence_by=wrong), "run")
