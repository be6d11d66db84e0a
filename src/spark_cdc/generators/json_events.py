"""Synthetic JSON event batches whose schemas drift: new attributes, new event types, conflicts.

Each event type has a base shape (``event_type`` plus a few attributes from a pool: strings,
integers, decimals, booleans, a nested ``device`` object, an ``items`` array of objects). Batch 0
uses the base shapes (variation 0). In batch ``b >= 1`` a share ``new_variation_rate`` of the
events carry variation ``b``, new at that batch, and the others one of the variations ``0..b-1``;
variation ``v`` adds the attributes of variations ``1..v`` (a boolean, a nested attribute, an
array of objects, an integer, in turn). ``new_event_types`` event types appear in batch 1.
With ``type_conflicts`` the last batch also holds events whose ``score`` is text (a widening to
string) and events whose ``device`` is text (a conflict that the registry quarantines). A share
``malformed_rate`` of the lines is truncated JSON. Attribute order varies between events. Event
types are equally frequent, or with ``type_skew`` s > 0 Zipf-like, as real feeds are: type k
(from 0) is drawn with weight 1 / (k + 1)^s.

Batches are written as JSON-lines files ``<root>/batch_<n>/part-00000.jsonl`` with a manifest of
what was generated (``manifest.json``).
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from spark_cdc.generators.progress import progress

AGENTS = ("Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (Macintosh)", "curl/8.5.0")
POOL = ("user_agent", "session_id", "ts", "score", "device", "items", "country", "is_mobile")


@dataclass(frozen=True)
class JsonEventSpec:
    """Knobs of the generated batches."""

    events: int = 10_000
    event_types: int = 5
    new_event_types: int = 1
    batches: int = 3
    new_variation_rate: float = 0.05
    malformed_rate: float = 0.001
    type_conflicts: bool = True
    seed: int = 0
    type_skew: float = 0.0


def _value(name: str, rng: random.Random) -> Any:
    """A value of a pool attribute (or of a variation's extra attribute)."""
    if name == "user_agent":
        return rng.choice(AGENTS)
    if name == "session_id":
        return f"s{rng.randrange(10**9)}"
    if name == "ts":
        return 1_700_000_000 + rng.randrange(10**7)
    if name == "score":
        return round(rng.random() * 100, 2)
    if name == "device":
        return {"os": rng.choice(("linux", "macos", "ios")), "model": f"m{rng.randrange(50)}"}
    if name == "items":
        return [{"sku": f"sku-{rng.randrange(1000)}", "qty": rng.randrange(1, 5)}]
    if name == "country":
        return rng.choice(("FR", "DE", "US", "JP"))
    return rng.random() < 0.5


def _extra(payload: dict[str, Any], variation: int, rng: random.Random) -> None:
    """Add the attributes of variations 1..variation."""
    for step in range(1, variation + 1):
        kind = step % 4
        if kind == 1:
            payload[f"has_feature_{step}"] = rng.random() < 0.5
        elif kind == 2:
            payload.setdefault("context", {})[f"attr_{step}"] = f"v{rng.randrange(100)}"
        elif kind == 3:
            payload[f"tags_{step}"] = [{"key": "k", "weight": rng.randrange(10)}]
        else:
            payload[f"count_{step}"] = rng.randrange(10**6)


def _base(event_type: int, seed: int) -> tuple[str, ...]:
    rng = random.Random(seed * 7919 + event_type)
    return tuple(sorted(rng.sample(POOL, rng.randrange(3, len(POOL) + 1))))


def _payload(type_id: int, variation: int, spec: JsonEventSpec, rng: random.Random) -> dict:
    payload: dict[str, Any] = {"event_type": f"type_{type_id:03d}"}
    for name in _base(type_id, spec.seed):
        payload[name] = _value(name, rng)
    _extra(payload, variation, rng)
    if rng.random() < 0.5:
        payload = dict(reversed(list(payload.items())))
    return payload


def _conflicting(payload: dict[str, Any], rng: random.Random) -> str | None:
    """Turn an event into a type conflict when it has the attribute (None when it has not)."""
    if "score" in payload and rng.random() < 0.5:
        payload["score"] = f"grade-{rng.choice('ABC')}"
        return "widened"
    if "device" in payload:
        payload["device"] = "unknown device"
        return "quarantined"
    return None


def generate_batches(
    spec: JsonEventSpec, show_progress: bool = False
) -> tuple[list[list[str]], dict[str, Any]]:
    """The batches' lines and a manifest of what they hold."""
    rng = random.Random(spec.seed)
    per_batch = [spec.events // spec.batches] * spec.batches
    per_batch[-1] += spec.events - sum(per_batch)
    batches: list[list[str]] = []
    counts: Counter[str] = Counter()
    with progress(spec.events, "events", "ev", show_progress) as bar:
        for number, size in enumerate(per_batch):
            types = spec.event_types + (spec.new_event_types if number >= 1 else 0)
            weights = [1 / (k + 1) ** spec.type_skew for k in range(types)]
            cumulative = list(itertools.accumulate(weights))
            lines = []
            for _ in range(size):
                if spec.type_skew > 0:
                    type_id = rng.choices(range(types), cum_weights=cumulative)[0]
                else:
                    type_id = rng.randrange(types)
                variation = 0
                if number >= 1:
                    new = rng.random() < spec.new_variation_rate
                    variation = number if new else rng.randrange(number)
                payload = _payload(type_id, variation, spec, rng)
                last = number == len(per_batch) - 1
                if spec.type_conflicts and last and number >= 1 and rng.random() < 0.01:
                    outcome = _conflicting(payload, rng)
                    if outcome:
                        counts[f"conflict_{outcome}"] += 1
                line = json.dumps(payload, separators=(",", ":"))
                if rng.random() < spec.malformed_rate:
                    line = line[: rng.randrange(1, len(line) - 1)]
                    counts["malformed"] += 1
                lines.append(line)
                bar.update()
            batches.append(lines)
    manifest = {"spec": asdict(spec), "events_per_batch": per_batch, "counts": dict(counts)}
    return batches, manifest


def write_batches(
    root: Path, spec: JsonEventSpec, first_batch: int = 1, show_progress: bool = False
) -> list[Path]:
    """Write the batches as ``root/batch_<n>/part-00000.jsonl``; returns the batch folders."""
    batches, manifest = generate_batches(spec, show_progress)
    folders = []
    for offset, lines in enumerate(batches):
        folder = root / f"batch_{first_batch + offset:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "part-00000.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        folders.append(folder)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folders
