"""History on chosen columns (``track_history`` / ``track_history_except``): a change of
untracked columns only updates the open version in place, under any batching, late and
out-of-order batches, duplicates, ties, key changes, unchanged columns and existing rows, as
the reference model says (change_events.reference)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from change_event_support import (
    HIGH,
    expected_state,
    expected_versions,
    initial_frame,
    run_incrementally,
    state_of,
    versions_of,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_change_event_resolver import (
    ROWS,
    _as_runs,
    at,
    streams,
    with_a_truncate,
    with_null_updates,
)

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.feed import feed_frame
from spark_cdc.change_events.model import ChangeEvent, ChangeEventConfigError, TargetSchema
from spark_cdc.change_events.pipeline import history_increment, ledger_increment
from spark_cdc.change_events.reference import ReferenceResult, resolve_reference

IMAGE = ("id", "name", "amount")
HIGH_TS = datetime.fromisoformat(HIGH)  # an open version's valid_to


def _upsert(kind: str, second: int, key: int, name: str, amount: int) -> ChangeEvent:
    old = (("id",), (str(key),)) if kind == "update" else (None, None)
    return ChangeEvent(kind, at(second), None, IMAGE, (str(key), name, str(amount)), *old)


def _versions(history) -> Counter:
    """versions_of with changed_at."""
    return versions_of(history, ROWS, changed=True)


def _expected(result: ReferenceResult) -> Counter:
    return expected_versions(result, ROWS, changed=True)


def test_the_reference_updates_the_open_version_in_place_on_untracked_changes():
    events = [
        _upsert("insert", 1, 1, "a", 10),
        _upsert("update", 2, 1, "a", 20),  # amount only: in place
        _upsert("update", 3, 1, "b", 20),  # name: a new version
        _upsert("update", 4, 1, "b", 30),  # in place again
    ]
    result = resolve_reference({}, events, ROWS, tracked=("name",))
    assert [
        (v.valid_from, v.values["name"], v.values["amount"], v.change_type, v.changed_at)
        for v in result.history[(1,)]
    ] == [(at(1), "a", 20, "update", at(2)), (at(3), "b", 30, "update", at(4))]
    assert result.state[(1,)].updated_at == at(4)


@pytest.mark.parametrize(
    ("setting", "tracked"),
    [
        ({"track_history": ["name"]}, ("name",)),
        ({"track_history_except": ["name"]}, ("amount",)),
        ({"track_history": []}, ()),
        ({}, None),
    ],
)
def test_the_tracked_columns_of_a_source(setting, tracked):
    raw = {"columns": {"id": "int", "name": "string", "amount": "int"}, "key_columns": ["id"]}
    config = SourceConfig.from_mapping("rows", {**raw, **setting})
    assert config.tracked_columns() == tracked


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ({"track_history": ["name"], "track_history_except": ["amount"]}, "exclude each other"),
        ({"track_history": ["id"]}, "non-key columns, not id"),
        ({"track_history_except": ["nope"]}, "not nope"),
        ({"track_history": "name"}, "must be a list"),
        ({"track_history": ["name"], "stored_as_scd_type": 1}, "needs a history"),
    ],
)
def test_a_track_history_setting_that_cannot_be_used_is_refused(setting, words):
    raw = {"columns": {"id": "int", "name": "string", "amount": "int"}, "key_columns": ["id"]}
    with pytest.raises(ChangeEventConfigError, match=words):
        SourceConfig.from_mapping("rows", {**raw, **setting})


def test_a_discovered_column_is_tracked_only_under_track_history_except():
    evolved = TargetSchema({"id": "int", "name": "string", "amount": "int", "x": "int"}, ("id",))
    only = SourceConfig("rows", ROWS, track_history=("name",))
    but = SourceConfig("rows", ROWS, track_history_except=("name",))
    assert only.tracked_columns(evolved) == ("name",)
    assert but.tracked_columns(evolved) == ("amount", "x")


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_incremental_and_full_runs_with_tracked_columns_equal_the_reference(spark, data):
    """Several independent streams (one key space each) go through the same runs, as the
    history model merges them (tombstones delete); then all batches in one run. Mixed at random
    with partial updates (updates' values NULL at random) and a truncate."""
    tracked = data.draw(st.sampled_from([("name",), ("amount",), ()]))
    partial, truncates = data.draw(st.booleans()), data.draw(st.booleans())
    config = SourceConfig(
        "rows",
        ROWS,
        track_history=tracked,
        ignore_null_updates=partial,
        truncate="apply" if truncates else None,
    )
    generated = [data.draw(streams(stream)) for stream in range(1, 9)]
    if partial:
        generated = with_null_updates(data, generated)
    if truncates:
        generated = with_a_truncate(data, generated)
    existing, runs, every_event = _as_runs(generated)
    expected = resolve_reference(
        existing, every_event, ROWS, truncates, ignore_null_updates=partial, tracked=tracked
    )
    initial = initial_frame(spark, existing, ROWS)

    _, history = run_incrementally(spark, runs, config, initial)
    assert state_of(history, ROWS) == expected_state(expected, ROWS)
    assert _versions(history) == _expected(expected)

    _, rebuilt = run_incrementally(spark, [[b for run in runs for b in run]], config, initial)
    assert _versions(rebuilt) == _expected(expected)


def test_a_late_name_change_splits_the_version_that_absorbed_later_changes(spark):
    """A version opened at 1 took amount changes at 3 and 5 in place; a name change at 4
    arrives late: the version ends at 4 with the values of 3 (not 5's), and 5's image (name a
    again) opens a version of its own."""
    config = SourceConfig("rows", ROWS, track_history=("name",))
    first = [
        (1, [_upsert("insert", 1, 1, "a", 10), _upsert("update", 3, 1, "a", 30)]),
        (2, [_upsert("update", 5, 1, "a", 50)]),
    ]
    late = [(3, [_upsert("update", 4, 1, "b", 40)])]
    ledger, history = run_incrementally(spark, [first, late], config)
    rows = sorted(
        (r.valid_from, r.valid_to, r.name, r.amount, r.changed_at, r.is_current)
        for r in history.collect()
    )
    assert rows == [
        (at(1), at(4), "a", 30, at(3), False),
        (at(4), at(5), "b", 40, at(4), False),
        (at(5), HIGH_TS, "a", 50, at(5), True),
    ]
    # nothing new: nothing to write
    assert history_increment(ledger, history, None, config, HIGH, "again", 3).isEmpty()


def test_a_late_name_change_back_merges_the_versions_after_it(spark):
    """Versions a (1), b (3); a late change to b at 2: the version opened at 3 is absorbed
    into the one opened at 2 and deleted from the history."""
    config = SourceConfig("rows", ROWS, track_history=("name",))
    first = [(1, [_upsert("insert", 1, 1, "a", 10), _upsert("update", 3, 1, "b", 30)])]
    late = [(2, [_upsert("update", 2, 1, "b", 20)])]
    _, history = run_incrementally(spark, [first, late], config)
    rows = sorted((r.valid_from, r.name, r.amount, r.changed_at) for r in history.collect())
    assert rows == [(at(1), "a", 10, at(1)), (at(2), "b", 30, at(3))]
    events = [e for _, batch in [*first, *late] for e in batch]
    feed = ledger_increment(feed_frame(spark, [(9, events)]), None, config, "one")
    full = history_increment(feed, None, None, config, HIGH, "one")
    assert sorted((r.valid_from, r.name, r.amount) for r in full.collect()) == [
        (at(1), "a", 10),
        (at(2), "b", 30),
    ]
