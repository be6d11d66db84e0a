"""Debezium change-event JSON normalized into the feed's events (change_events.model).

Input: a DataFrame with ``value`` (the message's JSON text, with or without the
``{"schema": ..., "payload": ...}`` envelope) and ``_batch_id``; other columns pass through.

- ``op`` c (create) and r (snapshot read) -> insert of ``after``; u -> update of ``after`` whose
  old key is ``before``'s key (``after``'s when ``before`` is absent: an update that keeps its
  key); d -> delete of ``before``'s key. Any other op (t truncate, m message), a tombstone (null
  value) or a message that is not exactly one JSON value (text after it, invalid UTF-8) keeps
  its op, ``tombstone`` or ``unparseable`` as change_type and is quarantined as an unknown
  change type.
- Images keep every attribute of ``before``/``after`` as text (numbers and booleans as their JSON
  text), so a column absent from an image is null there, and values cast to the target types.
- Position: event_ts = ``source.ts_ms`` (else the envelope's ``ts_ms``), event_seq =
  ``source.lsn`` (null when the connector has none).
- A primary-key change arrives as a delete of the old key and a create of the new key at the same
  position (ts_ms and lsn); such a pair within one batch becomes one update from the old key to
  the new one, so created_at follows the row. Without an lsn or a ts_ms (no position) no pairing
  is attempted.
- ``source_message`` keeps the raw JSON (both messages, as a JSON array, for a merged pair).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.pipeline import BATCH
from spark_cdc.core.json_text import is_strict_json

_IMAGE = "map<string,string>"
_BODY = (
    f"before {_IMAGE}, after {_IMAGE}, source struct<ts_ms: bigint, lsn: bigint>, "
    "op string, ts_ms bigint"
)
MESSAGE_SCHEMA = f"struct<payload: struct<{_BODY}>, {_BODY}>"
OPS = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}


def _key(image: Column, schema: TargetSchema) -> Column:
    return F.array(*(image[k] for k in schema.keys))


def normalize_debezium(messages: DataFrame, schema: TargetSchema) -> DataFrame:
    """Feed events (change_events.model columns, ``_batch_id``, ``source_message``)."""
    passthrough = [c for c in messages.columns if c != "value"]
    strict = is_strict_json(F.col("value"))
    # Only exact JSON is parsed (from_json of an empty text trips a Spark NullPointerException).
    parsed = F.from_json(F.when(strict, F.col("value")), MESSAGE_SCHEMA)
    fields = ("before", "after", "source", "op", "ts_ms")
    body = F.when(parsed["payload"].isNotNull(), parsed["payload"]).otherwise(
        F.struct(*(parsed[f].alias(f) for f in fields))
    )
    staged = messages.select(
        *passthrough,
        F.col("value").alias("source_message"),
        body.alias("m"),
        strict.alias("_strict"),
    )
    op = F.col("m.op")
    kind = F.when(F.col("source_message").isNull(), F.lit("tombstone")).when(
        ~F.col("_strict") | F.col("m").isNull() | op.isNull(), F.lit("unparseable")
    )
    for code, change in OPS.items():
        kind = kind.when(op == code, F.lit(change))
    kind = kind.otherwise(op)
    image = F.when(op.isin("c", "r", "u"), F.col("m.after"))
    old_key = F.when(op == "u", F.coalesce(F.col("m.before"), F.col("m.after"))).when(
        op == "d", F.col("m.before")
    )
    events = staged.select(
        *passthrough,
        "source_message",
        kind.alias("change_type"),
        F.timestamp_millis(F.coalesce(F.col("m.source.ts_ms"), F.col("m.ts_ms"))).alias("event_ts"),
        F.col("m.source.lsn").alias("event_seq"),
        F.map_keys(image).alias("column_names"),
        F.map_values(image).alias("column_values"),
        F.when(old_key.isNotNull(), F.array(*(F.lit(k) for k in schema.keys))).alias(
            "old_key_names"
        ),
        F.when(old_key.isNotNull(), _key(old_key, schema)).alias("old_key_values"),
        op.alias("_op"),
    )
    return _merge_key_changes(events)


def _merge_key_changes(events: DataFrame) -> DataFrame:
    """Pairs (delete, create) at one position in one batch become one key-changing update."""
    position = Window.partitionBy(BATCH, "event_ts", "event_seq")
    ops = F.collect_list("_op").over(position)
    in_pair = (
        F.col("event_seq").isNotNull()
        & F.col("event_ts").isNotNull()
        & (F.size(ops) == 2)
        & F.array_contains(ops, "d")
        & (F.array_contains(ops, "c") | F.array_contains(ops, "r"))
    )
    flagged = events.withColumn("_pair", in_pair)
    singles = flagged.where(~F.col("_pair")).drop("_pair", "_op")
    on = [BATCH, "event_ts", "event_seq"]
    creates = flagged.where(F.col("_pair") & (F.col("_op") != "d")).alias("c")
    deletes = flagged.where(F.col("_pair") & (F.col("_op") == "d")).alias("d")
    from_delete = ("old_key_names", "old_key_values")
    merged = creates.join(deletes, on).select(
        *on,
        *(
            F.col(f"d.{c}" if c in from_delete else f"c.{c}")
            for c in singles.columns
            if c not in (*on, "change_type", "source_message")
        ),
        F.lit("update").alias("change_type"),
        F.to_json(F.array("d.source_message", "c.source_message")).alias("source_message"),
    )
    return singles.unionByName(merged)
