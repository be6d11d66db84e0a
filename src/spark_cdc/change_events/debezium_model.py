"""Plain-Python model of the Debezium normalization (change_events.debezium), message by
message: the written semantics the Spark code is checked against.

- ``op`` c and r -> insert of ``after``; u -> update of ``after`` whose old key is ``before``'s
  key (``after``'s when ``before`` is absent); d -> delete of ``before``'s key; any other op,
  a tombstone (None) or a message that is not exactly one JSON object keeps its op,
  ``tombstone`` or ``unparseable`` as change type (quarantined as an unknown change type).
- Image values are the JSON text of each attribute (strings as they are, numbers and booleans
  as written), null for JSON null.
- event_ts = ``source.ts_ms`` (else the envelope's ``ts_ms``) in milliseconds, event_seq =
  ``source.lsn``.
- A delete and a create at one (batch, ts_ms, lsn) with a non-null lsn, and nothing else
  there, become one update from the delete's key to the create's image.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from spark_cdc.change_events.model import EPOCH, ChangeEvent, TargetSchema

OPS = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _body(message: str | None) -> dict | None:
    if message is None:
        return None
    try:
        parsed = json.loads(message)
    except json.JSONDecodeError:
        return None
    if not isinstance(parsed, dict):
        return None
    payload = parsed.get("payload")
    return payload if isinstance(payload, dict) else parsed


def event_of(message: str | None, schema: TargetSchema) -> tuple[ChangeEvent, str | None]:
    """The feed event of one message, and its op (None when unreadable)."""
    body = _body(message)
    if message is None or body is None or not body.get("op"):
        kind = "tombstone" if message is None else "unparseable"
        return ChangeEvent(kind, None, None, None, None), None
    op = body["op"]
    source = body.get("source") or {}
    millis = source.get("ts_ms", body.get("ts_ms"))
    ts = None if millis is None else EPOCH + timedelta(milliseconds=millis)
    lsn = source.get("lsn")
    before, after = body.get("before"), body.get("after")
    image = after if op in ("c", "r", "u") else None
    old = (after if before is None else before) if op == "u" else (before if op == "d" else None)
    names = None if image is None else tuple(image)
    values = None if image is None else tuple(_text(v) for v in image.values())
    old_names = None if old is None else schema.keys
    old_values = None if old is None else tuple(_text(old.get(k)) for k in schema.keys)
    kind = OPS.get(op, op)
    return ChangeEvent(kind, ts, lsn, names, values, old_names, old_values), op


def feed_events(batches: Sequence[Sequence[str | None]], schema: TargetSchema) -> list[ChangeEvent]:
    """The feed events of delivered batches of messages (key-change pairs merged per batch)."""
    events: list[ChangeEvent] = []
    for batch in batches:
        decoded = [event_of(message, schema) for message in batch]
        at: dict[tuple[datetime, int], list[int]] = {}
        for index, (event, op) in enumerate(decoded):
            if op is not None and event.event_seq is not None and event.event_ts is not None:
                at.setdefault((event.event_ts, event.event_seq), []).append(index)
        merged: set[int] = set()
        for indexes in at.values():
            ops = sorted(decoded[i][1] for i in indexes)
            if len(indexes) == 2 and "d" in ops and ({"c", "r"} & set(ops)):
                delete = next(i for i in indexes if decoded[i][1] == "d")
                create = next(i for i in indexes if decoded[i][1] != "d")
                d_event, c_event = decoded[delete][0], decoded[create][0]
                events.append(
                    ChangeEvent(
                        "update",
                        c_event.event_ts,
                        c_event.event_seq,
                        c_event.column_names,
                        c_event.column_values,
                        d_event.old_key_names,
                        d_event.old_key_values,
                    )
                )
                merged.update(indexes)
        events += [event for i, (event, _) in enumerate(decoded) if i not in merged]
    return events
