"""Synthetic Debezium change-event streams with a composite key, and their expected state.

A simulated ``accounts`` table (key ``region`` string + ``account_no`` bigint; ``owner`` string,
``balance`` decimal(12,2)) changes through messages as Debezium's Postgres connector emits them
with its defaults (a decimal as base64 two's-complement bytes, its scale in the schema envelope
when there is one; change_events.debezium.types): snapshot reads
(r) and creates (c), updates (u, with the full ``before`` row), deletes (d, followed by a Kafka
tombstone), and primary-key changes as a delete + create pair at one position (ts_ms, lsn).
Delivery is at least once: messages repeat in later batches; batches arrive shuffled inside
and some late; a few messages are unreadable or of other ops (m, a logical decoding message).
The expected state comes from the plain-Python models (change_events.debezium.model,
change_events.reference).
"""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from spark_cdc.change_events.debezium.model import feed_events
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.reference import ReferenceResult, resolve_reference

SCHEMA = TargetSchema(
    columns={
        "region": "string",
        "account_no": "bigint",
        "owner": "string",
        "balance": "decimal(12,2)",
    },
    keys=("region", "account_no"),
)
REGIONS = ("eu", "us", "apac")
START_MS = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC
# A Kafka tombstone (the null message after a delete), as a line of a landed file.
TOMBSTONE = "null"


@dataclass(frozen=True)
class DebeziumSpec:
    """Knobs of one generated Debezium stream."""

    accounts: int = 200
    events: int = 2_000
    batches: int = 6
    key_change_rate: float = 0.05
    delete_rate: float = 0.08
    duplicate_rate: float = 0.03
    late_batch_rate: float = 0.2
    malformed_rate: float = 0.01
    seed: int = 0


# The envelope's schema of an image, as the connector writes it for the accounts table.
_IMAGE_FIELDS = [
    {"type": "string", "optional": False, "field": "region"},
    {"type": "int64", "optional": False, "field": "account_no"},
    {"type": "string", "optional": True, "field": "owner"},
    {
        "type": "bytes",
        "optional": True,
        "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1,
        "parameters": {"scale": "2", "connect.decimal.precision": "12"},
        "field": "balance",
    },
]
_ENVELOPE_SCHEMA = {
    "type": "struct",
    "name": "pg.public.accounts.Envelope",
    "fields": [
        {"type": "struct", "fields": _IMAGE_FIELDS, "optional": True, "field": image}
        for image in ("before", "after")
    ],
}


def encoded_decimal(value: Decimal, scale: int = 2) -> str:
    """A decimal as the connector sends it: its unscaled value's minimal two's-complement
    big-endian bytes (Java's BigInteger.toByteArray), in base64."""
    unscaled = int(value.scaleb(scale))
    size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


def _encoded(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {**row, "balance": encoded_decimal(row["balance"])}


def _message(op: str, before, after, ms: int, lsn: int, envelope: bool) -> str:
    payload = {
        "before": _encoded(before),
        "after": _encoded(after),
        "source": {"connector": "postgresql", "table": "accounts", "ts_ms": ms, "lsn": lsn},
        "op": op,
        "ts_ms": ms + 7,
    }
    return json.dumps({"schema": _ENVELOPE_SCHEMA, "payload": payload} if envelope else payload)


def _row(key: tuple[str, int], rng: random.Random) -> dict:
    return {
        "region": key[0],
        "account_no": key[1],
        "owner": f"owner-{rng.randrange(10_000)}",
        "balance": _amount(rng),
    }


def _amount(rng: random.Random) -> Decimal:
    return Decimal(rng.randrange(-50_000, 5_000_000)).scaleb(-2)


def generate_messages(spec: DebeziumSpec) -> list[list[str]]:
    """Delivered batches of messages, as the lines of the landed files."""
    rng = random.Random(spec.seed)
    live: dict[tuple[str, int], dict] = {}
    units: list[list[str]] = []  # messages that travel together (a key-change pair)
    ms, lsn = START_MS, 1_000

    def new_key() -> tuple[str, int]:
        while True:
            key = (rng.choice(REGIONS), rng.randrange(1, 10 * spec.accounts + 10))
            if key not in live:
                return key

    for _ in range(spec.accounts):
        ms, lsn = ms + rng.randrange(1, 50), lsn + 1
        key = new_key()
        live[key] = _row(key, rng)
        units.append([_message("r", None, live[key], ms, lsn, rng.random() < 0.8)])
    for _ in range(spec.events):
        ms, lsn = ms + rng.randrange(1, 5_000), lsn + rng.randrange(1, 4)
        envelope = rng.random() < 0.8
        roll = rng.random()
        if rng.random() < spec.malformed_rate:
            junk = rng.choice(
                ['{"payload": {"op": "c"', "not json", _message("m", None, None, ms, lsn, True)]
            )
            units.append([junk])
        elif not live or roll < 0.15:
            key = new_key()
            live[key] = _row(key, rng)
            units.append([_message("c", None, live[key], ms, lsn, envelope)])
        elif roll < 0.15 + spec.delete_rate:
            key = rng.choice(sorted(live))
            before = live.pop(key)
            units.append([_message("d", before, None, ms, lsn, envelope), TOMBSTONE])
        elif roll < 0.15 + spec.delete_rate + spec.key_change_rate:
            old = rng.choice(sorted(live))
            before = live.pop(old)
            key = new_key()
            live[key] = {**_row(key, rng), "owner": before["owner"]}
            pair = [
                _message("d", before, None, ms, lsn, envelope),
                _message("c", None, live[key], ms, lsn, envelope),
            ]
            units.append(pair)
        else:
            key = rng.choice(sorted(live))
            before = live[key]
            live[key] = {**before, "balance": _amount(rng)}
            units.append([_message("u", before, live[key], ms, lsn, envelope)])
    size = max(1, -(-len(units) // spec.batches))
    batches = [units[i : i + size] for i in range(0, len(units), size)]
    for index in range(1, len(batches)):
        earlier = [u for b in batches[:index] for u in b]
        repeats = [u for u in earlier if rng.random() < spec.duplicate_rate]
        batches[index] = batches[index] + repeats
    for batch in batches:
        rng.shuffle(batch)
    late = [i for i in range(len(batches) - 1) if rng.random() < spec.late_batch_rate]
    order = [i for i in range(len(batches)) if i not in late] + late
    return [[m for unit in batches[i] for m in unit] for i in order]


def expected(batches: list[list[str]]) -> ReferenceResult:
    """The state after all batches, by the plain-Python models."""
    # truncates apply, as a Debezium source's default setting says (the stream sends none)
    return resolve_reference({}, feed_events(batches, SCHEMA), SCHEMA, truncates=True)


def write_debezium_stream(spec: DebeziumSpec, output: Path) -> dict:
    """Write batches/batch-NNNNN.jsonl (delivery order, one message a line),
    expected_state.jsonl and manifest.json into ``output``; return the manifest."""
    batches = generate_messages(spec)
    result = expected(batches)
    (output / "batches").mkdir(parents=True, exist_ok=True)
    for stale in (output / "batches").glob("batch-*.jsonl"):
        stale.unlink()
    for index, batch in enumerate(batches):
        (output / "batches" / f"batch-{index:05d}.jsonl").write_text("\n".join(batch) + "\n")
    with (output / "expected_state.jsonl").open("w") as handle:
        for row in result.state.values():
            record = {
                **row.values,
                "created_at": row.created_at.isoformat(sep=" "),
                "updated_at": row.updated_at.isoformat(sep=" "),
                "last_change_type": row.last_change_type,
            }
            handle.write(json.dumps(record, default=str) + "\n")  # decimals as their text
    manifest = {
        "messages": sum(len(b) for b in batches),
        "events": result.applied + result.duplicates + len(result.quarantined) + result.skipped,
        "applied": result.applied,
        "duplicates": result.duplicates,
        "quarantined": len(result.quarantined),
        "skipped": result.skipped,
        "batches": len(batches),
        "final_rows": len(result.state),
    }
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifest
