"""Synthetic change-event streams (the resolver's input shape) with their expected final state.

A simulated source table (``id`` int key, ``name`` string, ``amount`` int) starts with
``initial_rows`` rows and changes through ``events`` events: inserts of new keys, updates (a share
of them change the key, continuing chains up to ``max_chain`` moves), deletes and re-inserts of
deleted keys (their shares: ``insert_rate``, ``reinsert_rate``, ``delete_rate``; the rest are
updates: equal re-insert and delete rates without inserts keep the live keys about fixed). Knobs
add exact duplicates, ties on ``event_ts`` broken by ``event_seq``, malformed
events, shuffled order inside each batch and late batches (delivered after later ones). The
expected final state is computed by the plain-Python reference (change_events.reference).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from spark_cdc.change_events.model import ChangeEvent, TargetSchema
from spark_cdc.change_events.reference import StateRow, resolve_reference
from spark_cdc.generators.progress import iterate

SCHEMA = TargetSchema(columns={"id": "int", "name": "string", "amount": "int"}, keys=("id",))
START = datetime(2026, 1, 1)
MALFORMED = ("unknown_type", "null_key", "length_mismatch", "missing_image", "bad_cast")


@dataclass(frozen=True)
class StreamSpec:
    """Knobs of one generated stream."""

    initial_rows: int = 1_000
    events: int = 10_000
    batches: int = 10
    key_change_rate: float = 0.05
    max_chain: int = 8
    duplicate_rate: float = 0.02
    tie_rate: float = 0.02
    late_batch_rate: float = 0.2
    # An event whose event_ts is up to a day older than its place in the stream (delivered in
    # its place: older than its key's later versions).
    late_event_rate: float = 0.0
    # Event time between consecutive events: 1 to max_gap_ms milliseconds (uniform); 1000 gives
    # about 172,800 events a day of event time, 17279 about 10,000 (a day per 10,000 events).
    max_gap_ms: int = 1000
    malformed_rate: float = 0.01
    insert_rate: float = 0.15
    reinsert_rate: float = 0.05
    delete_rate: float = 0.10
    seed: int = 0


def _image(key: int, rng: random.Random) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ("id", "name", "amount"), (
        str(key),
        f"name-{rng.randrange(10**6)}",
        str(rng.randrange(10**4)),
    )


def _malformed(rng: random.Random, ts: datetime, seq: int) -> ChangeEvent:
    kind = rng.choice(MALFORMED)
    if kind == "unknown_type":
        return ChangeEvent("upsert", ts, seq, ("id", "name", "amount"), ("1", "x", "1"))
    if kind == "null_key":
        return ChangeEvent("insert", ts, seq, ("id", "name", "amount"), (None, "x", "1"))
    if kind == "length_mismatch":
        return ChangeEvent("insert", ts, seq, ("id", "name", "amount"), ("1", "x"))
    if kind == "missing_image":
        return ChangeEvent("update", ts, seq, None, None, ("id",), ("1",))
    return ChangeEvent("insert", ts, seq, ("id", "name", "amount"), ("1", "x", "lots"))


class _LiveKeys:
    """Live keys with their chain length: O(1) random choice, insert and removal."""

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.moves: dict[int, int] = {}
        self._index: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self.keys)

    def add(self, key: int, moves: int = 0) -> None:
        self._index[key] = len(self.keys)
        self.keys.append(key)
        self.moves[key] = moves

    def remove(self, key: int) -> int:
        index, last = self._index.pop(key), self.keys.pop()
        if last != key:
            self.keys[index], self._index[last] = last, index
        return self.moves.pop(key)

    def choice(self, rng: random.Random) -> int:
        return self.keys[rng.randrange(len(self.keys))]


def generate_stream(spec: StreamSpec, show_progress: bool = False, with_expected: bool = True):
    """(initial state, batches of events in delivery order, reference result or None)."""
    rng = random.Random(spec.seed)
    initial: dict[tuple, StateRow] = {}
    live = _LiveKeys()
    for key in range(spec.initial_rows):
        _, values = _image(key, rng)
        row = {"id": key, "name": values[1], "amount": int(values[2])}
        initial[(key,)] = StateRow(row, START, START, "insert")
        live.add(key)
    deleted: list[int] = []
    next_key = spec.initial_rows
    ts, seq = START, 0
    events: list[ChangeEvent] = []
    for _ in iterate(range(spec.events), "events", "ev", show_progress):
        if rng.random() >= spec.tie_rate:
            ts += timedelta(milliseconds=rng.randint(1, spec.max_gap_ms))
        seq += 1
        if rng.random() < spec.malformed_rate:
            events.append(_malformed(rng, ts, seq))
            continue
        event_ts = ts
        if spec.late_event_rate and rng.random() < spec.late_event_rate:
            event_ts = ts - timedelta(seconds=rng.uniform(0, 86_400))
        roll = rng.random()
        if not live or roll < spec.insert_rate:
            key, next_key = next_key, next_key + 1
            events.append(ChangeEvent("insert", event_ts, seq, *_image(key, rng)))
            live.add(key)
        elif roll < spec.insert_rate + spec.reinsert_rate and deleted:
            key = deleted.pop(rng.randrange(len(deleted)))
            events.append(ChangeEvent("INSERT", event_ts, seq, *_image(key, rng)))
            live.add(key)
        elif roll < spec.insert_rate + spec.reinsert_rate + spec.delete_rate:
            key = live.choice(rng)
            events.append(ChangeEvent("delete", event_ts, seq, None, None, ("id",), (str(key),)))
            live.remove(key)
            deleted.append(key)
        else:
            key = live.choice(rng)
            moves = live.remove(key)
            new_key = key
            if rng.random() < spec.key_change_rate and moves < spec.max_chain:
                new_key, next_key = next_key, next_key + 1
                moves += 1
            events.append(
                ChangeEvent("Update", event_ts, seq, *_image(new_key, rng), ("id",), (str(key),))
            )
            live.add(new_key, moves)
        if rng.random() < spec.duplicate_rate:
            events.append(events[-1])
    size = max(1, -(-len(events) // spec.batches))
    batches = [events[i : i + size] for i in range(0, len(events), size)]
    for batch in batches:
        rng.shuffle(batch)
    late = [i for i in range(len(batches)) if rng.random() < spec.late_batch_rate]
    order = [i for i in range(len(batches)) if i not in late] + late
    delivered = [batches[i] for i in order]
    result = resolve_reference(initial, events, SCHEMA) if with_expected else None
    return initial, delivered, result


def _state_record(row: StateRow) -> dict:
    return {
        **row.values,
        "created_at": row.created_at.isoformat(sep=" "),
        "updated_at": row.updated_at.isoformat(sep=" "),
        "last_change_type": row.last_change_type,
    }


def write_stream(spec: StreamSpec, output: Path, show_progress: bool = True) -> dict:
    """Write initial_state.jsonl, batches/batch-NNNNN.jsonl (delivery order),
    expected_state.jsonl and manifest.json into ``output``; return the manifest."""
    initial, batches, result = generate_stream(spec, show_progress)
    (output / "batches").mkdir(parents=True, exist_ok=True)
    for stale in (output / "batches").glob("batch-*.jsonl"):
        stale.unlink()

    def dump(path: Path, records) -> None:
        with path.open("w") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")

    dump(output / "initial_state.jsonl", (_state_record(r) for r in initial.values()))
    for index, batch in enumerate(batches):
        dump(output / "batches" / f"batch-{index:05d}.jsonl", (e.as_record() for e in batch))
    dump(output / "expected_state.jsonl", (_state_record(r) for r in result.state.values()))
    reasons: dict[str, int] = {}
    for _, reason in result.quarantined:
        reasons[reason] = reasons.get(reason, 0) + 1
    manifest = {
        "events": sum(len(b) for b in batches),
        "applied": result.applied,
        "duplicates": result.duplicates,
        "quarantined": len(result.quarantined),
        "quarantine_reasons": reasons,
        "ambiguous": len(result.ambiguous),
        "batches": len(batches),
        "final_rows": len(result.state),
    }
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifest
