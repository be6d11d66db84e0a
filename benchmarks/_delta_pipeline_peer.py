"""The hand-written Delta pipeline peer of the change-event models: the same four outputs a
Spark engineer writes without dbt or spark_cdc, run as one script per run
(``python <script> <first batch> <last batch>``, batches ``first <= _batch_id < last``):

- the ledger: the run's valid events appended;
- the quarantine: the run's invalid events (unknown change type, no event time, no key; an
  insert or update without values, with the wrong number of them, or with an amount that is no
  integer) appended, each with its reason;
- the SCD2 history by Delta's documented staged-updates MERGE: each key's latest action staged
  twice where it changes an open version (once under its key to close that version, once under
  a NULL merge key to insert the new one), the open-row predicate in the ON clause;
- the current table by one MERGE (deletes removed, the rest upserted), a row changed only by an
  event at least as new as the one it holds.

An update that moves a key is a delete of the old key and an upsert of the new one. Late events
are not re-ordered: one older than its key's open version is left out of the history, and one
older than a delete brings the deleted key back into the current table; ``wrong_rows`` in the
benchmark counts the keys whose current row differs from the project's.
The first run (``first`` = 0) also takes the initial rows and creates the tables.
"""

from __future__ import annotations

from pathlib import Path

PIPELINE = """
import sys, time
from delta.tables import DeltaTable
from pyspark.sql import functions as F
from spark_cdc.session.runtime import get_or_create_session

spark = get_or_create_session()
first, last = int(sys.argv[1]), int(sys.argv[2])
started = int(time.time() * 1000)
spark.sql("create schema if not exists delta_peer")
events = spark.table("{landing}").where(
    (F.col("_batch_id") >= first) & (F.col("_batch_id") < last)
)
image_key = F.element_at("column_values", 1)
old_key = F.element_at("old_key_values", 1)
is_delete = F.lower("change_type") == "delete"
amount = F.element_at("column_values", 3)
reason = (
    F.when(~F.lower("change_type").isin("insert", "update", "delete"), "unknown_change_type")
    .when(F.col("event_ts").isNull(), "no_event_time")
    .when(F.coalesce(image_key, old_key).isNull(), "no_key")
    .when(~is_delete & F.col("column_values").isNull(), "no_values")
    .when(~is_delete & (F.size("column_values") != 3), "wrong_column_count")
    .when(~is_delete & amount.isNotNull() & amount.cast("int").isNull(), "bad_value:amount")
)
checked = events.withColumn("reason", reason)
checked.where("reason is not null").write.format("delta").mode("append").saveAsTable(
    "delta_peer.quarantine"
)
valid = checked.where("reason is null").drop("reason")
valid.write.format("delta").mode("append").saveAsTable("delta_peer.ledger")

actions = valid.select(
    F.coalesce(image_key, old_key).cast("int").alias("id"),
    F.when(F.lower("change_type") == "delete", "delete").otherwise("upsert").alias("kind"),
    "event_ts", "event_seq",
    F.element_at("column_values", 2).alias("name"),
    F.element_at("column_values", 3).cast("int").alias("amount"),
).unionByName(
    valid.where((F.lower("change_type") == "update") & (old_key != image_key)).select(
        old_key.cast("int").alias("id"), F.lit("delete").alias("kind"),
        "event_ts", "event_seq",
        F.lit(None).cast("string").alias("name"), F.lit(None).cast("int").alias("amount"),
    )
)
if first == 0:
    initial = spark.table("{initial}").select(
        F.col("id").cast("int"), F.lit("upsert").alias("kind"),
        F.col("updated_at").alias("event_ts"), F.lit(-1).cast("long").alias("event_seq"),
        "name", F.col("amount").cast("int"),
    )
    actions = initial.unionByName(actions)
latest = (
    actions.groupBy("id")
    .agg(F.max(F.struct("event_ts", "event_seq", "kind", "name", "amount")).alias("e"))
    .select("id", "e.kind", "e.name", "e.amount", F.col("e.event_ts").alias("updated_at"))
)

if first == 0:
    for name, columns in (
        ("history", "id int, name string, amount int, valid_from timestamp, valid_to timestamp"),
        ("current", "id int, name string, amount int, updated_at timestamp"),
    ):
        spark.sql(f"drop table if exists delta_peer.{{name}}")
        spark.sql(f"create table delta_peer.{{name}} ({{columns}}) using delta")

history = DeltaTable.forName(spark, "delta_peer.history")
open_rows = history.toDF().where("valid_to is null").select(
    "id", F.col("name").alias("open_name"), F.col("amount").alias("open_amount"),
    F.col("valid_from").alias("open_from"), F.lit(True).alias("has_open"),
)
known = latest.join(open_rows, "id", "left").fillna(False, subset=["has_open"])
changed = ~F.col("open_name").eqNullSafe(F.col("name")) | ~F.col("open_amount").eqNullSafe(
    F.col("amount")
)
# An action older than its key's open version is left out (the history is not re-ordered).
not_older = ~F.col("has_open") | (F.col("updated_at") >= F.col("open_from"))
changes = known.where(
    not_older
    & (
        (F.col("kind") == "delete") & F.col("has_open")
        | (F.col("kind") == "upsert") & (~F.col("has_open") | changed)
    )
).select("id", "kind", "name", "amount", "updated_at", "has_open")
# Staged updates: under its key, a change closes the open version (or, for a new key, is
# inserted); under a NULL key, an upsert of a key with an open version inserts the new one.
staged = changes.select(F.col("id").alias("merge_key"), "*").unionByName(
    changes.where("kind = 'upsert' and has_open").select(
        F.lit(None).cast("int").alias("merge_key"), "*"
    )
)
(
    history.alias("h")
    .merge(staged.alias("s"), "h.id = s.merge_key and h.valid_to is null")
    .whenMatchedUpdate(set={{"valid_to": "s.updated_at"}})
    .whenNotMatchedInsert(
        condition="s.kind = 'upsert'",
        values={{
            "id": "s.id", "name": "s.name", "amount": "s.amount",
            "valid_from": "s.updated_at", "valid_to": "null",
        }},
    )
    .execute()
)
VALUES = {{"name": "s.name", "amount": "s.amount", "updated_at": "s.updated_at"}}
(
    DeltaTable.forName(spark, "delta_peer.current").alias("t")
    .merge(latest.alias("s"), "t.id = s.id")
    .whenMatchedDelete(condition="s.kind = 'delete' and s.updated_at >= t.updated_at")
    .whenMatchedUpdate(condition="s.kind != 'delete' and s.updated_at >= t.updated_at", set=VALUES)
    .whenNotMatchedInsert(condition="s.kind != 'delete'", values={{"id": "s.id", **VALUES}})
    .execute()
)
print("PEER_WINDOW", started, int(time.time() * 1000))
"""

WRONG_ROWS = """
from spark_cdc.session.runtime import get_or_create_session

spark = get_or_create_session()
peer = spark.table("{peer}").select("id", "name", "amount")
ours = spark.table("{current}").select("id", "name", "amount")
wrong = peer.exceptAll(ours).union(ours.exceptAll(peer)).select("id").distinct().count()
print("WRONG_ROWS", wrong)
"""


def pipeline_script(folder: Path, landing: str, initial: str) -> Path:
    """The peer's script for the landing table ``landing`` and its initial rows ``initial``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "delta_pipeline.py"
    script.write_text(PIPELINE.format(landing=landing, initial=initial))
    return script


def wrong_rows_script(folder: Path, peer: str, current: str) -> Path:
    """A script printing how many keys' rows of table ``peer`` differ from ``current``'s."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"wrong_rows_{peer.replace('.', '_')}.py"
    script.write_text(WRONG_ROWS.format(peer=peer, current=current))
    return script
