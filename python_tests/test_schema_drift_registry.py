"""The registry's rules in plain Python: versions per load, conflicts, and batching independence."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from spark_cdc.schema_drift.registry import ACCEPTED, CONFLICT, SeenVariation, registry_rows
from spark_cdc.schema_drift.variation import hash_of

T0 = datetime(2026, 1, 1)


def _seen(event_type: str, payload: dict, load: int, events: int = 1) -> SeenVariation:
    text = json.dumps(payload)
    when = T0 + timedelta(hours=load)
    return SeenVariation(
        event_type, hash_of(text), load, f"f{load}", text, when, when, load, events
    )


def _by_hash(rows):
    return {row["variation_hash"]: row for row in rows}


def test_talk_example_gets_version_two():
    first = registry_rows([], [_seen("1.1", {"event_type": "1.1", "user_agent": "x"}, 1)], T0, "r1")
    assert [(r["schema_version"], r["status"]) for r in first] == [(1, ACCEPTED)]
    plugin = _seen("1.1", {"event_type": "1.1", "user_agent": "x", "has_plugins": True}, 2)
    second = registry_rows(first, [plugin], T0, "r2")
    row = _by_hash(second)[plugin.variation_hash]
    assert row["schema_version"] == 2
    superset = json.loads(row["superset_schema"])
    assert {f["name"]: f["type"] for f in superset["fields"]} == {
        "event_type": "string",
        "has_plugins": "boolean",
        "user_agent": "string",
    }


def test_several_new_variations_of_one_load_give_one_version_and_known_ones_are_updated():
    base = _seen("e", {"event_type": "e", "a": 1}, 1)
    registry = registry_rows([], [base], T0, "r1")
    again = _seen("e", {"event_type": "e", "a": 5}, 2, events=3)
    new_1 = _seen("e", {"event_type": "e", "a": 1, "b": True}, 2)
    new_2 = _seen("e", {"event_type": "e", "a": 1, "c": {"d": "x"}}, 2)
    conflict = _seen("e", {"event_type": "e", "a": {"nested": 1}}, 2)
    rows = _by_hash(registry_rows(registry, [again, new_1, new_2, conflict], T0, "r2"))
    assert rows[base.variation_hash]["events_seen"] == 4
    assert rows[base.variation_hash]["schema_version"] == 1
    assert rows[new_1.variation_hash]["schema_version"] == 2
    assert rows[new_2.variation_hash]["schema_version"] == 2
    assert (
        rows[new_1.variation_hash]["superset_schema"]
        == rows[new_2.variation_hash]["superset_schema"]
    )
    assert rows[conflict.variation_hash]["status"] == CONFLICT
    assert rows[conflict.variation_hash]["conflict_reason"].startswith("type_conflict:$.a:")
    assert rows[conflict.variation_hash]["superset_schema"] is None


def _merge(registry: list[dict], increment: list[dict]) -> list[dict]:
    merged = {(r["event_type"], r["variation_hash"]): r for r in registry}
    merged.update({(r["event_type"], r["variation_hash"]): r for r in increment})
    return list(merged.values())


def _content(rows: list[dict]) -> set[tuple]:
    return {
        tuple(
            value
            for key, value in sorted(row.items())
            if key not in {"registered_at", "process_id"}
        )
        for row in rows
    }


def _aggregate(seen: list[SeenVariation]) -> list[SeenVariation]:
    """What one run sees of several loads: one entry per variation (as the Spark aggregation)."""
    groups: dict[tuple, list[SeenVariation]] = {}
    for item in seen:
        groups.setdefault((item.event_type, item.variation_hash), []).append(item)
    out = []
    for items in groups.values():
        first = min(items, key=lambda v: (v.first_load_seq, v.prototype_source_file, v.prototype))
        out.append(
            SeenVariation(
                first.event_type,
                first.variation_hash,
                first.first_load_seq,
                first.prototype_source_file,
                first.prototype,
                min(v.first_seen_at for v in items),
                max(v.last_seen_at for v in items),
                max(v.last_load_seq for v in items),
                sum(v.events for v in items),
            )
        )
    return out


PAYLOADS = st.fixed_dictionaries(
    {"event_type": st.sampled_from(["a", "b"])},
    optional={
        "x": st.one_of(st.integers(0, 9), st.floats(0, 1), st.text(max_size=2), st.booleans()),
        "y": st.one_of(st.just({"z": 1}), st.just({"w": "v"}), st.just([1]), st.just("s")),
        "q": st.just([{"k": 1}]),
    },
)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(PAYLOADS, min_size=1, max_size=5), min_size=1, max_size=5), st.data())
def test_registry_does_not_depend_on_how_loads_are_grouped_into_runs(loads, data):
    seen = [
        _seen(p["event_type"], p, number)
        for number, payloads in enumerate(loads, start=1)
        for p in payloads
    ]
    at_once = registry_rows([], _aggregate(seen), T0, "full")
    cuts = sorted(data.draw(st.sets(st.integers(1, len(loads)), max_size=len(loads))))
    registry: list[dict] = []
    start = 1
    for end in [*cuts, len(loads) + 1]:
        run = [item for item in seen if start <= item.first_load_seq < end]
        if run:
            registry = _merge(registry, registry_rows(registry, _aggregate(run), T0, "inc"))
        start = end
    assert _content(registry) == _content(at_once)
