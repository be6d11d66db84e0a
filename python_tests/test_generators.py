"""Generators: exact extract counts, CLI forms, determinism; change-event streams that reconcile."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from spark_cdc.change_events.reference import resolve_reference
from spark_cdc.cli.main import main as cli
from spark_cdc.generators.change_events import SCHEMA, StreamSpec, generate_stream, write_stream
from spark_cdc.generators.extracts import GeneratorError, plan_increment
from spark_cdc.schema_drift.variation import hash_of

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _read(folder: Path) -> list[dict]:
    parts = sorted(folder.glob("part-*"))
    tables = [pq.read_table(p) if p.suffix == ".parquet" else pa_csv.read_csv(p) for p in parts]
    return [row for table in tables for row in table.to_pylist()]


def _keyed(rows: list[dict], keys: int) -> dict[tuple, tuple]:
    return {
        tuple(row[f"key_{i + 1}"] for i in range(keys)): tuple(
            v for k, v in row.items() if k.startswith("attr_")
        )
        for row in rows
    }


def test_plan_is_exact_and_refuses_bad_shares():
    plan = plan_increment(10_000, 10_000, 0.2, 0.4, 0.4)
    assert (plan.deleted, plan.updated, plan.unchanged, plan.inserted) == (2000, 4000, 4000, 2000)
    with pytest.raises(GeneratorError, match=r"must equal 1.0, got 1.1"):
        plan_increment(100, 100, 0.2, 0.5, 0.4)
    with pytest.raises(GeneratorError, match="at least the 80 updated"):
        plan_increment(100, 50, 0.2, 0.4, 0.4)


@pytest.mark.parametrize("file_format", ["csv", "parquet"])
def test_extracts_have_exactly_the_requested_changes(tmp_path, file_format):
    days = [tmp_path / f"day{i}" for i in (1, 2, 3)]
    code = cli(
        ["generate-extracts", "1000", "1000", "2", "3", "0.2", "0.4", "0.4",
         *map(str, days), "--format", file_format, "--seed", "5", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    previous = _keyed(_read(days[0]), 2)
    assert len(previous) == 1000
    assert all(UUID.match(part) for key in previous for part in key)
    for day in days[1:]:
        current = _keyed(_read(day), 2)
        deleted = previous.keys() - current.keys()
        inserted = current.keys() - previous.keys()
        kept = previous.keys() & current.keys()
        updated = {k for k in kept if previous[k] != current[k]}
        assert (len(deleted), len(inserted), len(updated), len(kept - updated)) == (
            200,
            200,
            400,
            400,
        )
        manifest = json.loads((day / "_manifest.json").read_text())
        assert manifest["deleted"] == 200 and manifest["updated"] == 400
        previous = current


def test_positional_and_named_forms_give_the_same_data(tmp_path):
    positional = [tmp_path / "p1", tmp_path / "p2"]
    cli(["generate-extracts", "50", "60", "1", "2", "0.1", "0.3", "0.6", *map(str, positional),
         "--seed", "3", "--no-progress"])  # fmt: skip
    named = [tmp_path / "n1", tmp_path / "n2"]
    cli(["generate-extracts", "--initial-records", "50", "--incremental-records", "60",
         "--key-columns", "1", "--nonkey-columns", "2", "--pct-deleted", "0.1",
         "--pct-updated", "0.3", "--pct-unchanged", "0.6", "--initial-output", str(named[0]),
         "--incremental-output", str(named[1]), "--seed", "3", "--no-progress"])  # fmt: skip
    for a, b in zip(positional, named, strict=True):
        assert _read(a) == _read(b)
    assert len(_read(positional[1])) == 60  # 5 deleted, 15 updated, 30 unchanged, 15 inserted


def test_cli_reports_bad_shares_clearly(tmp_path, capsys):
    code = cli(["generate-extracts", "10", "10", "1", "1", "0.5", "0.4", "0.4",
                str(tmp_path / "a"), str(tmp_path / "b")])  # fmt: skip
    assert code == 2
    assert "must equal 1.0" in capsys.readouterr().err


def test_change_event_stream_reconciles_and_is_deterministic(tmp_path):
    spec = StreamSpec(initial_rows=50, events=2_000, batches=7, malformed_rate=0.05, seed=11)
    manifest = write_stream(spec, tmp_path / "a", show_progress=False)
    again = write_stream(spec, tmp_path / "b", show_progress=False)
    assert manifest == again
    assert (
        manifest["events"] == manifest["applied"] + manifest["duplicates"] + manifest["quarantined"]
    )
    assert manifest["quarantined"] > 0 and manifest["duplicates"] > 0
    delivered = sorted((tmp_path / "a" / "batches").glob("batch-*.jsonl"))
    assert len(delivered) == 7
    expected = [json.loads(x) for x in (tmp_path / "a" / "expected_state.jsonl").open()]
    assert len(expected) == manifest["final_rows"]


def test_expected_state_does_not_depend_on_delivery_order():
    initial, batches, result = generate_stream(StreamSpec(initial_rows=30, events=800, seed=4))
    events = [event for batch in batches for event in batch]
    random.Random(1).shuffle(events)
    shuffled = resolve_reference(initial, events, SCHEMA)
    assert {k: vars(v) for k, v in shuffled.state.items()} == {
        k: vars(v) for k, v in result.state.items()
    }


def test_late_events_are_older_than_their_place_by_up_to_a_day():
    """With late_event_rate, that share of the valid events carries an event_ts up to a day
    before the stream's time at its place (event_seq gives the place); without it, none."""

    def stream_times(rate: float) -> list[tuple[int, datetime]]:
        spec = StreamSpec(
            initial_rows=100,
            events=5_000,
            batches=1,
            malformed_rate=0.0,
            duplicate_rate=0.0,
            late_event_rate=rate,
            seed=3,
        )
        _, batches, _ = generate_stream(spec, with_expected=False)
        return sorted((e.event_seq, e.event_ts) for batch in batches for e in batch)

    def late(times: list[tuple[int, datetime]]) -> list[timedelta]:
        behind, latest = [], times[0][1]
        for _, ts in times:
            if ts < latest:
                behind.append(latest - ts)
            latest = max(latest, ts)
        return behind

    assert late(stream_times(0.0)) == []
    behind = late(stream_times(0.05))
    assert 150 <= len(behind) <= 350  # 5% of 5,000
    assert max(behind) <= timedelta(days=1, seconds=1)
    assert max(behind) > timedelta(hours=1)


def test_json_event_batches_drift_as_asked_and_are_deterministic(tmp_path):
    args = ["--events", "3000", "--event-types", "4", "--new-event-types", "2", "--batches", "3"]
    assert cli(["generate-json-events", str(tmp_path / "a"), *args, "--no-progress"]) == 0
    assert cli(["generate-json-events", str(tmp_path / "b"), *args, "--no-progress"]) == 0
    files = sorted((tmp_path / "a").glob("batch_*/part-00000.jsonl"))
    assert [f.read_text() for f in files] == [
        f.read_text() for f in sorted((tmp_path / "b").glob("batch_*/part-00000.jsonl"))
    ]
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    batches = [f.read_text().splitlines() for f in files]
    assert [len(lines) for lines in batches] == manifest["events_per_batch"] == [1000, 1000, 1000]
    parsed, malformed = [], 0
    for lines in batches:
        good = []
        for line in lines:
            try:
                good.append(json.loads(line))
            except json.JSONDecodeError:
                malformed += 1
        parsed.append(good)
    assert malformed == manifest["counts"].get("malformed", 0)
    hashes = [
        {(p["event_type"], hash_of(json.dumps(p))) for p in batch}  # variations per batch
        for batch in parsed
    ]
    types = [{event_type for event_type, _ in batch} for batch in hashes]
    assert len(types[0]) == 4 and len(types[1]) == len(types[2]) == 6
    assert len(hashes[0]) == 4  # batch 1: the base shape of each type
    assert all(len(h) > len(t) for h, t in zip(hashes[1:], types[1:], strict=True))
    conflicts = manifest["counts"]["conflict_widened"] + manifest["counts"]["conflict_quarantined"]
    assert conflicts > 0
    assert (
        sum(isinstance(p.get("device"), str) for p in parsed[2])
        == manifest["counts"]["conflict_quarantined"]
    )


def test_skewed_event_types_follow_zipf_shares():
    """With type_skew 1, type k's share is 1/(k+1) over the tenth harmonic number (type 0 about
    34%, type 9 about 3.4%); without, every type about 10%."""
    from spark_cdc.generators.json_events import JsonEventSpec, generate_batches

    def shares(skew: float) -> list[float]:
        spec = JsonEventSpec(events=40_000, event_types=10, new_event_types=0, batches=1)
        spec = dataclasses.replace(spec, malformed_rate=0.0, type_skew=skew)
        (lines,), _ = generate_batches(spec)
        counts = Counter(json.loads(line)["event_type"] for line in lines)
        return [counts[f"type_{k:03d}"] / len(lines) for k in range(10)]

    harmonic = sum(1 / k for k in range(1, 11))
    for k, share in enumerate(shares(1.0)):
        assert abs(share - 1 / (k + 1) / harmonic) < 0.01
    assert all(abs(share - 0.1) < 0.01 for share in shares(0.0))


def test_json_event_cli_refuses_bad_rates(tmp_path, capsys):
    assert cli(["generate-json-events", str(tmp_path), "--malformed-rate", "2"]) == 2
    assert "malformed_rate must be between 0.0 and 1.0" in capsys.readouterr().err


def test_max_gap_ms_sets_how_much_event_time_the_stream_spans():
    """Consecutive events are 1 to max_gap_ms milliseconds apart (ties aside): 10,000 events at
    17279 cover about a day of event time, at the default 1000 about 83 minutes."""

    def span(max_gap_ms: int) -> timedelta:
        spec = StreamSpec(
            initial_rows=100,
            events=10_000,
            batches=1,
            malformed_rate=0.0,
            tie_rate=0.0,
            max_gap_ms=max_gap_ms,
            seed=5,
        )
        _, batches, _ = generate_stream(spec, with_expected=False)
        times = [e.event_ts for batch in batches for e in batch]
        return max(times) - min(times)

    assert timedelta(hours=23) <= span(17_279) <= timedelta(hours=25)
    assert timedelta(minutes=80) <= span(1_000) <= timedelta(minutes=87)


def test_change_event_cli_refuses_a_gap_below_one_millisecond(tmp_path, capsys):
    assert cli(["generate-change-events", str(tmp_path / "out"), "--max-gap-ms", "0"]) == 2
    assert "max_gap_ms must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
