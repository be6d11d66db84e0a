"""Plain-Python model of the Debezium normalization (change_events.debezium), message by
message: the written semantics the Spark code is checked against.

- ``op`` c and r -> insert of ``after``; u -> update of ``after`` whose old key is ``before``'s
  key (``after``'s when ``before`` is absent); d -> delete of ``before``'s key; t -> truncate;
  a tombstone (None or the text ``null``) -> ``tombstone``; any other op keeps its op and a
  message that is not exactly one JSON object is ``unparseable``.
- Image values are decoded (debezium_types.decode) by the field's schema entry, else by the
  declared type and the settings; other attributes are their JSON text (strings as they are,
  numbers and booleans as written), null for JSON null. A value that does not decode sets the
  landing error ``undecodable:<column>:<how>`` (``old_<column>`` for the old key); a value
  equal to a placeholder spelling (DebeziumSettings.placeholders) is kept as sent and its
  column is listed in ``unchanged_columns``.
- event_ts = ``source.ts_ms`` (else the envelope's ``ts_ms``) in milliseconds, event_seq =
  ``source.lsn``, event_position = the connector family's position (debezium.positions; a
  known family's unreadable position is the landing error ``invalid_position:<family>``).
- A delete and a create at one (batch, ts_ms, lsn, event_position) with a non-null lsn or
  event_position, and nothing else there, become one update from the delete's key to the
  create's image.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from spark_cdc.change_events.debezium.positions import position_of
from spark_cdc.change_events.debezium.types import (
    DebeziumSettings,
    FieldSchema,
    Undecodable,
    array_name,
    decode,
    field_kind,
)
from spark_cdc.change_events.model import EPOCH, ChangeEvent, TargetSchema

OPS = {"c": "insert", "r": "insert", "u": "update", "d": "delete", "t": "truncate"}


def _text(value: Any) -> str | None:
    """An image value as Spark reads it into text: a string as it is, anything else as its
    compact JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _parsed(message: str) -> tuple[dict | None, dict | None]:
    """(body, envelope schema) of a message; body None when it is not a JSON object."""
    try:
        parsed = json.loads(message)
    except json.JSONDecodeError:
        return None, None
    if not isinstance(parsed, dict):
        return None, None
    payload = parsed.get("payload")
    if isinstance(payload, dict):
        schema = parsed.get("schema")
        return payload, schema if isinstance(schema, dict) else None
    return parsed, None


def _whole(value: Any) -> int | None:
    """A source field's integer (None unless it is one or its text is one)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if re.fullmatch(r"-?[0-9]+", text, re.ASCII) else None


def _name(field: dict) -> str | None:
    """A schema entry's logical name; an array's from its elements' (types.array_name)."""
    items = field.get("items") if field.get("type") == "array" else None
    return field.get("name") or array_name(items)


def _fields(envelope: dict | None, image: str) -> dict[str, FieldSchema] | None:
    """The envelope's field entries of ``image`` (before or after) by name."""
    if envelope is None:
        return None
    for entry in envelope.get("fields") or ():
        if isinstance(entry, dict) and entry.get("field") == image:
            return {
                f["field"]: FieldSchema(f.get("type"), _name(f), f.get("parameters"))
                for f in entry.get("fields") or ()
                if isinstance(f, dict) and "field" in f
            }
    return None


def _decoded(
    image: dict,
    fields: dict[str, FieldSchema] | None,
    columns: dict[str, str],
    settings: DebeziumSettings,
    prefix: str = "",
    undeclared: bool = False,
) -> tuple[dict, list[str], str | None]:
    """(name -> text, unchanged columns, first decoding error) of an image's attributes (the
    undeclared ones decoded as text columns when ``undeclared``; their errors after the
    declared columns')."""
    texts, unchanged, error, late_error = {}, [], None, None
    placeholders = settings.placeholders()
    for name, value in image.items():
        text = _text(value)
        if name not in columns and undeclared and text is not None:
            field = None if fields is None else fields.get(name)
            try:
                texts[name] = decode(text, field, "string", settings)
            except Undecodable:
                texts[name] = None
                if late_error is None:
                    how = field_kind(field, "string", settings)[1]
                    if field is not None and (field.name or field.type):
                        how = str(field.name or field.type)
                    late_error = f"undecodable:{name}:{how}"
            continue
        if name not in columns or text is None:
            texts[name] = text
            continue
        if text in placeholders and not prefix:
            texts[name] = text
            unchanged.append(name)
            continue
        field = None if fields is None else fields.get(name)
        try:
            texts[name] = decode(text, field, columns[name], settings, name)
        except Undecodable:
            texts[name] = None
            if error is None:
                kind, how = field_kind(field, columns[name], settings, name)
                if kind != "refused" and field is not None and (field.name or field.type):
                    how = str(field.name or field.type)
                error = f"undecodable:{prefix}{name}:{how}"
    return texts, unchanged, error or late_error


def event_of(
    message: str | None,
    schema: TargetSchema,
    settings: DebeziumSettings | None = None,
    undeclared: bool = False,
) -> tuple[ChangeEvent, str | None]:
    """The feed event of one message, and its op (None when unreadable)."""
    settings = settings or DebeziumSettings()
    if message is None or message.strip(" ") == "null":
        return ChangeEvent("tombstone", None, None, None, None), None
    body, envelope = _parsed(message)
    if body is None or not body.get("op"):
        return ChangeEvent("unparseable", None, None, None, None), None
    op = body["op"]
    source = body.get("source") or {}
    millis = _whole(source.get("ts_ms"))
    millis = _whole(body.get("ts_ms")) if millis is None else millis
    ts = None if millis is None else EPOCH + timedelta(milliseconds=millis)
    lsn = _whole(source.get("lsn"))
    position, position_error = position_of(source)
    before, after = body.get("before"), body.get("after")
    image = after if op in ("c", "r", "u") else None
    old = (after if before is None else before) if op == "u" else (before if op == "d" else None)
    old_fields = "after" if op == "u" and before is None else "before"
    names = values = unchanged = error = None
    if image is not None:
        texts, found, error = _decoded(
            image, _fields(envelope, "after"), schema.columns, settings, undeclared=undeclared
        )
        names, values = tuple(image), tuple(texts[n] for n in image)
        # only the declared non-key columns can be left unchanged
        unchanged = tuple(c for c in schema.nonkeys if c in found) or None
    old_names = old_values = None
    if old is not None:
        keys = {k: old.get(k) for k in schema.keys}
        key_texts, _, old_error = _decoded(
            keys, _fields(envelope, old_fields), schema.columns, settings, prefix="old_"
        )
        old_names, old_values = schema.keys, tuple(key_texts[k] for k in schema.keys)
        error = error or old_error
    kind = OPS.get(op, op)
    if kind in ("insert", "update", "delete", "truncate"):
        error = position_error or (error if kind != "truncate" else None)
    else:
        error = None
    event = ChangeEvent(
        kind, ts, lsn, names, values, old_names, old_values, error, unchanged, position
    )
    return event, op


def feed_events(
    batches: Sequence[Sequence[str | None]],
    schema: TargetSchema,
    settings: DebeziumSettings | None = None,
    undeclared: bool = False,
) -> list[ChangeEvent]:
    """The feed events of delivered batches of messages, one per message (a key change's delete
    and create stay two: the resolver pairs them, change_events.reference)."""
    return [
        event_of(message, schema, settings, undeclared)[0] for batch in batches for message in batch
    ]
