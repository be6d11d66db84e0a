"""Change events with ``allowed_lateness`` and ``evolve_columns``: an incremental run in any
grouping of batches equals the full build (watermarks, deletes' images, discovered columns)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from change_event_support import run_incrementally, state_of, status_counts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_change_event_resolver import ROWS, at

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.evolution import columns_in
from spark_cdc.change_events.model import ChangeEvent, ChangeEventConfigError
from spark_cdc.change_events.resolve import current_rows
from spark_cdc.hash_cdc.hashing import column

LATE = timedelta(seconds=10)
IMAGE = ("id", "name", "amount")


def _insert(second: int, key: int, names=IMAGE, values=None) -> ChangeEvent:
    values = values or (str(key), f"n{key}", str(second))
    return ChangeEvent("insert", at(second), None, names, values)


def _reasons(ledger) -> dict[int, str | None]:
    """Key -> reason (or status) of each event of a ledger whose events have distinct keys."""
    rows = ledger.select("image.id", "quarantine_reason", "status").collect()
    return {row[0]: row[1] or row[2] for row in rows if row[0] is not None}


def _outcomes(ledger) -> Counter:
    """Every event's batch, fingerprint, status and reason."""
    columns = ["_batch_id", "event_fingerprint", "status", "quarantine_reason"]
    return Counter(tuple(row) for row in ledger.select(*columns).collect())


def _equal(left, right) -> None:
    columns = [column(c) for c in left.columns if c not in ("process_id", "row_hash")]
    assert sorted(left.columns) == sorted(right.columns)
    assert left.select(columns).exceptAll(right.select(columns)).isEmpty()
    assert right.select(columns).exceptAll(left.select(columns)).isEmpty()


def test_a_batch_without_a_watermark_after_the_first_build_is_resolved_whole(spark):
    # Run 1 lands only an invalid event (a null key): the history is built, and empty. Run 2
    # lands A (no earlier valid event: no watermark) and B (watermark 00:01:30).
    null_key = ChangeEvent("insert", at(10), None, IMAGE, (None, "x", "1"))
    batch_a = [_insert(50, 1), _insert(100, 3)]
    batch_b = [_insert(200, 2)]
    config = SourceConfig("rows", ROWS, allowed_lateness=LATE)
    runs = [[(0, [null_key])], [(1, batch_a), (2, batch_b)]]
    ledger, history = run_incrementally(spark, runs, config, marks=True)
    _, full = run_incrementally(spark, [[b for run in runs for b in run]], config)
    assert status_counts(ledger) == {"applied": 3, "quarantined": 1}
    assert sorted(state_of(history, ROWS)) == [(1,), (2,), (3,)] == sorted(state_of(full, ROWS))
    _equal(history, full)


def test_a_column_set_quarantined_event_counts_for_the_watermark_in_every_grouping(spark):
    # k2's image names `bad name` (invalid_name); its time, like a name collision's, tells how far
    # the source has got: k3, 50 s older than it, is too late in a full build and in runs.
    batch_0 = [_insert(10, 1), _insert(100, 2, ("id", "name", "bad name"), ("2", "b", "v"))]
    batch_1 = [_insert(50, 3)]
    config = SourceConfig("rows", ROWS, allowed_lateness=LATE, evolve_columns=True)
    runs = [[(0, batch_0)], [(1, batch_1)]]
    ledger, history = run_incrementally(spark, runs, config, marks=True)
    full_ledger, full = run_incrementally(spark, [[(0, batch_0), (1, batch_1)]], config)
    assert _reasons(ledger) == _reasons(full_ledger)
    assert _reasons(ledger)[3] == "too_late"
    assert _reasons(ledger)[2] == "invalid_name:$.bad name"
    _equal(history, full)


def test_a_deletes_image_is_ignored_with_column_evolution(spark):
    # A delete's image is not read: a name clashing with a declared one, or an unknown one, is
    # neither a collision nor a new column.
    batch_0 = [_insert(1, 1), _insert(2, 2)]
    batch_1 = [
        ChangeEvent("delete", at(3), None, ("id", "C0"), ("1", "x"), ("id",), ("1",)),
        ChangeEvent("delete", at(4), None, ("id", "zz"), ("2", "y"), ("id",), ("2",)),
    ]
    config = SourceConfig("rows", ROWS, evolve_columns=True)
    for runs in ([[(0, batch_0)], [(1, batch_1)]], [[(0, batch_0), (1, batch_1)]]):
        ledger, history = run_incrementally(spark, runs, config, marks=True)
        assert status_counts(ledger) == {"applied": 4}
        assert "zz" not in history.columns and "C0" not in history.columns
        assert state_of(history, ROWS) == {}


def test_a_dotted_column_name_is_kept_through_history_and_current(spark):
    batch_0 = [_insert(1, 1, ("id", "name", "a.b"), ("1", "x", "v"))]
    batch_1 = [
        ChangeEvent("update", at(5), None, ("id", "a.b"), ("1", "w"), ("id",), ("1",)),
        _insert(6, 2, ("id", "a-b"), ("2", "u")),
    ]
    config = SourceConfig("rows", ROWS, allowed_lateness=LATE, evolve_columns=True)
    _, history = run_incrementally(spark, [[(0, batch_0)], [(1, batch_1)]], config, marks=True)
    _, full = run_incrementally(spark, [[(0, batch_0), (1, batch_1)]], config)
    _equal(history, full)
    schema = columns_in(ROWS, history.schema)
    assert list(schema.columns) == ["id", "name", "amount", "a.b", "a-b"]
    current = {row["id"]: row.asDict() for row in current_rows(history, schema).collect()}
    assert current[1]["a.b"] == "w" and current[2]["a-b"] == "u"


# --- property: any grouping of batches into runs equals the full build -------------------------

NAMES = [IMAGE, ("id", "name", "amount", "tier"), ("id", "Tier"), ("id", "name", "x y")]


def _event(draw, keys: list[int]) -> ChangeEvent:
    second = draw(st.integers(0, 60))
    key = draw(st.sampled_from(keys))
    kind = draw(st.sampled_from(["insert", "update", "move", "delete", "bad"]))
    names = draw(st.sampled_from(NAMES))
    values = tuple(str(key) if n == "id" else f"{n}{second}" for n in names)
    values = tuple(v if n != "amount" else str(second) for n, v in zip(names, values, strict=True))
    if kind == "insert":
        return ChangeEvent("insert", at(second), None, names, values)
    if kind == "delete":
        image = draw(st.sampled_from([None, names]))
        return ChangeEvent(
            "delete", at(second), None, image, None if image is None else values, ("id",),
            (str(key),),
        )  # fmt: skip
    if kind == "bad":
        return ChangeEvent("insert", at(second), None, IMAGE, (None, "x", "1"))
    old = draw(st.sampled_from(keys)) if kind == "move" else key
    return ChangeEvent("update", at(second), None, names, values, ("id",), (str(old),))


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_grouping_of_batches_into_runs_equals_the_full_build(spark, data):
    keys = list(range(1, data.draw(st.integers(2, 4)) + 1))
    batches = [
        [_event(data.draw, keys) for _ in range(data.draw(st.integers(1, 4)))]
        for _ in range(data.draw(st.integers(2, 5)))
    ]
    numbered = list(enumerate(batches))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(numbered) - 1), max_size=3)))
    runs = [numbered[a:b] for a, b in zip([0, *cuts], [*cuts, len(numbered)], strict=True)]
    lateness = data.draw(st.sampled_from([LATE, timedelta(seconds=30), None]))
    config = SourceConfig("rows", ROWS, allowed_lateness=lateness, evolve_columns=True)
    ledger, history = run_incrementally(spark, runs, config, marks=True)
    full_ledger, full = run_incrementally(spark, [numbered], config)
    assert _outcomes(ledger) == _outcomes(full_ledger)
    _equal(history, full)


def test_excepted_columns_are_never_discovered_nor_collide(spark):
    """``except_columns`` (AUTO CDC's except_column_list): the named image columns, ignoring
    case, are left out of every column set: not columns of the history, no collision between
    two spellings of one, and an incremental run equals the full build."""
    wide = ("id", "name", "amount", "note", "Secret")
    twice = ("id", "name", "amount", "SECRET", "secret", "tier")  # a collision but excepted
    batch_0 = [_insert(1, 1, wide, ("1", "a", "1", "n1", "s1"))]
    batch_1 = [
        _insert(2, 2, twice, ("2", "b", "2", "S", "s", "gold")),
        _insert(3, 3, ("id", "name", "amount", "note"), ("3", "c", "3", "n3")),
    ]
    config = SourceConfig("rows", ROWS, evolve_columns=True, except_columns=("secret", "Tier"))
    runs = [[(0, batch_0)], [(1, batch_1)]]
    ledger, history = run_incrementally(spark, runs, config, marks=True)
    full_ledger, full = run_incrementally(spark, [[(0, batch_0), (1, batch_1)]], config)
    assert status_counts(ledger) == status_counts(full_ledger) == {"applied": 3}
    extra = [c for c in history.columns if c.lower() in ("note", "secret", "tier")]
    assert extra == ["note"]
    notes = {
        r.id: r.note for r in current_rows(history, columns_in(ROWS, history.schema)).collect()
    }
    assert notes == {1: "n1", 2: None, 3: "n3"}
    _equal(history, full)
    # without the exception the two spellings of one name collide
    plain = SourceConfig("rows", ROWS, evolve_columns=True)
    plain_ledger, _ = run_incrementally(spark, [[(0, batch_0), (1, batch_1)]], plain)
    assert status_counts(plain_ledger)["quarantined"] == 1


def test_an_excepted_column_cannot_be_declared():
    with pytest.raises(ChangeEventConfigError, match="except_columns names declared columns: Name"):
        SourceConfig("rows", ROWS, except_columns=("Name",))
    with pytest.raises(ChangeEventConfigError, match="except_columns must be a list"):
        SourceConfig.from_mapping(
            "rows", {"columns": {"id": "int"}, "key_columns": ["id"], "except_columns": "x"}
        )
