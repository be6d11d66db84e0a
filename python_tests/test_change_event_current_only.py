"""A current-only source (``stored_as_scd_type: 1``): its current table, written run by run from
the ledger alone, holds the reference's state under any batching, late and out-of-order batches,
duplicates, ties, key changes, unchanged columns, truncates and existing rows."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from change_event_support import (
    current_state,
    expected_state,
    initial_frame,
    run_current_only,
    status_counts,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from macro_render import Macros
from support import PROJECT_DIR
from test_change_event_resolver import ROWS, _as_runs, at, streams, with_a_truncate

from spark_cdc.change_events import current_only
from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.model import ChangeEvent, ChangeEventConfigError
from spark_cdc.change_events.reference import StateRow, resolve_reference

IMAGE = ("id", "name", "amount")


def _upsert(kind: str, second: int, key: int, name: str) -> ChangeEvent:
    old = (("id",), (str(key),)) if kind == "update" else (None, None)
    return ChangeEvent(kind, at(second), None, IMAGE, (str(key), name, str(second)), *old)


def _delete(second: int, key: int) -> ChangeEvent:
    return ChangeEvent("delete", at(second), None, None, None, ("id",), (str(key),))


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_current_only_source_holds_the_reference_state_after_every_run(spark, data):
    """Several independent streams (one key space each) go through the same runs; a run's
    batches may be older than the earlier runs' (late), so both ways of an increment run."""
    truncates = data.draw(st.booleans())
    config = SourceConfig("rows", ROWS, truncate="apply" if truncates else None)
    generated = [data.draw(streams(stream)) for stream in range(1, 7)]
    if truncates:
        generated = with_a_truncate(data, generated)
    existing, runs, every_event = _as_runs(generated)
    expected = resolve_reference(existing, every_event, ROWS, truncates=truncates)
    initial = initial_frame(spark, existing, ROWS)

    ledger, current = run_current_only(spark, runs, config, initial)
    assert current_state(current, ROWS) == expected_state(expected, ROWS)
    counts = status_counts(ledger)
    assert counts.get("applied", 0) == expected.applied
    assert counts.get("duplicate", 0) == expected.duplicates


def test_a_late_delete_before_an_update_leaves_the_row_the_update_made(spark, monkeypatch):
    """Run 1: an insert at 10 s and an update at 30 s; run 2: a delete at 20 s (late). Applied
    in position order the update at 30 s finds no row and inserts its image: the row is live,
    created at 30 s. Applying the late delete to the current row would lose it; the late run
    resolves the key again from the ledger. An in-order run (3) takes the current row as it is."""
    paths = []
    in_order = current_only.in_order

    def watched(*args):
        paths.append(in_order(*args))
        return paths[-1]

    monkeypatch.setattr(current_only, "in_order", watched)
    runs = [
        [(0, [_upsert("insert", 10, 1, "a"), _upsert("update", 30, 1, "b")])],
        [(1, [_delete(20, 1)])],
        [(2, [_upsert("update", 40, 1, "c"), _upsert("insert", 41, 2, "d")])],
    ]
    _, current = run_current_only(spark, runs, SourceConfig("rows", ROWS))
    assert current_state(current, ROWS) == {
        (1,): (1, "c", 40, at(30), at(40), "update"),
        (2,): (2, "d", 41, at(41), at(41), "insert"),
    }
    assert paths == [False, True]  # run 2 late, run 3 in order


def test_an_existing_row_set_after_the_increment_s_events_is_no_state_at_their_time(spark):
    """An existing row of key 1 set at 100 s; run 1 inserts key 1 at 50 s, run 2 moves 1 -> 2
    at 60 s (after every earlier event). In position order the move takes the row key 1 held
    since 50 s (key 2 created at 50 s), then the existing row is set at 100 s. The current row
    of key 1 (set at 100 s) is not the state at 60 s: the run resolves the keys again."""
    existing = {(1,): StateRow({"id": 1, "name": "e", "amount": 9}, at(1), at(100), "insert")}
    initial = initial_frame(spark, existing, ROWS)
    move = ChangeEvent("update", at(60), None, IMAGE, ("2", "m", "60"), ("id",), ("1",))
    events = [_upsert("insert", 50, 1, "a"), move]
    _, current = run_current_only(
        spark, [[(0, events[:1])], [(1, events[1:])]], SourceConfig("rows", ROWS), initial
    )
    expected = resolve_reference(existing, events, ROWS)
    assert current_state(current, ROWS) == expected_state(expected, ROWS)
    assert current_state(current, ROWS)[(2,)][3] == at(50)


def test_partial_updates_of_a_current_only_source_keep_the_stored_values(spark):
    """ignore_null_updates with no history: a NULL in an update keeps the current row's value,
    also when a late update lands between two earlier ones."""
    config = SourceConfig("rows", ROWS, ignore_null_updates=True)

    def partial(second: int, name: str | None, amount: str | None) -> ChangeEvent:
        image = ("1", name, amount)
        return ChangeEvent("update", at(second), None, IMAGE, image, ("id",), ("1",))

    events = [_upsert("insert", 10, 1, "a"), partial(30, None, "3"), partial(20, "b", None)]
    runs = [[(0, events[:2])], [(1, events[2:])]]
    _, current = run_current_only(spark, runs, config)
    expected = resolve_reference({}, events, ROWS, ignore_null_updates=True)
    assert current_state(current, ROWS) == expected_state(expected, ROWS)
    assert current_state(current, ROWS)[(1,)][:3] == (1, "b", 3)


@pytest.mark.parametrize(("text", "kind"), [(None, 2), ("", 2), ("1", 1), (2, 2), (" 1 ", 1)])
def test_the_scd_type_setting(text, kind):
    raw = {"columns": ROWS.columns, "key_columns": ["id"], "stored_as_scd_type": text}
    assert SourceConfig.from_mapping("rows", raw).stored_as_scd_type == kind


def test_an_unknown_scd_type_is_refused():
    raw = {"columns": ROWS.columns, "key_columns": ["id"], "stored_as_scd_type": 3}
    with pytest.raises(ChangeEventConfigError, match="stored_as_scd_type must be 1 or 2"):
        SourceConfig.from_mapping("rows", raw)


def _ledger_test(tmp_path) -> None:
    """The generic test change_events_unambiguous_order as a macro file under ``tmp_path``."""
    text = (PROJECT_DIR / "tests/generic/change_events_unambiguous_order.sql").read_text()
    text = text.replace("{% test ", "{% macro test_").replace("{% endtest %}", "{% endmacro %}")
    (tmp_path / "unambiguous.sql").write_text(text)


def test_the_ledger_test_finds_two_changes_of_a_key_at_one_position_across_batches(spark, tmp_path):
    """Run 1 lands an insert of key 1 at 10 s; run 2 an update of key 1 at 10 s (no sequence,
    no position: nothing orders them), an update of key 2 that keeps its key and a key change
    3 -> 4 at 20 s. The test scoped to run 2's rows finds key 1's pair (both events, against
    the whole ledger) and nothing else."""
    _ledger_test(tmp_path)
    runs = [
        [(0, [_upsert("insert", 10, 1, "a"), _upsert("insert", 5, 3, "c")])],
        [
            (
                1,
                [
                    _upsert("update", 10, 1, "b"),
                    _upsert("update", 20, 2, "x"),
                    ChangeEvent("update", at(20), None, IMAGE, ("4", "d", "1"), ("id",), ("3",)),
                ],
            )
        ],
    ]
    ledger, _ = run_current_only(spark, runs, SourceConfig("rows", ROWS))
    ledger.createOrReplaceTempView("whole_ledger")
    ledger.where("_batch_id = 1").createOrReplaceTempView("new_rows")
    columns = [SimpleNamespace(name=name) for name in ledger.columns]
    adapter = SimpleNamespace(get_columns_in_relation=lambda relation: columns)
    macros = Macros("unambiguous.sql", root=tmp_path, extra={"adapter": adapter})
    query = macros.test_change_events_unambiguous_order("new_rows", "whole_ledger", ["id"])
    found = spark.sql(query).collect()
    assert {(row.acted_on.id, row.event_ts) for row in found} == {(1, at(10))}
    # without the earlier batch's event the new rows alone hold no pair
    ledger.where("_batch_id = 1").createOrReplaceTempView("whole_ledger")
    assert spark.sql(query).collect() == []
