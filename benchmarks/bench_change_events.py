"""Change-event resolution: this project's resolver against the Delta-native floor, same run.

For each size and key-change share, the stream generator (spark_cdc.generators.change_events)
makes N events over N/10 existing rows: 15% inserts, 5% re-inserts of deleted keys, 10% deletes,
70% updates of which enough change the key for the given share of all events (default 0 and 5%;
chains up to 8 moves), 2% exact duplicates, 2% ties on event_ts (ordered by event_seq), 10 batches
shuffled inside, some delivered late. All read the same Parquet copy of the feed and of the
existing rows:

- floor (only where no key changes): what a Spark engineer writes without the project: the
  latest event per key by one ``max(struct(event_ts, event_seq, ...))`` aggregate, then one Delta
  MERGE into the existing rows' table that deletes (``floor_delete``) or marks tombstones
  (``floor_tombstone``); the target table is written before the clock starts;
- article (``--article``; benchmarks/baselines/article_change_event_resolver.py): the article's
  iterative algorithm, writing its resolved table (Delta);
- project (spark_cdc.change_events.resolve.resolve_feed): validation, then the window resolver
  (duplicates dropped in its window, pointer jumping for created_at), its current table written
  (Delta);
- pipeline (what the dbt models do on a full build, reported apart): the ledger of every event
  with its status, the SCD2 history and the current table, each written (Delta).

Each variant runs --repeat times, the order reversed every repetition; reports the median
seconds, each repetition's, ratios to the floor, events/s and peak resident memory (driver JVM,
reset between runs); checks the project's current table against the plain-Python reference
(sizes up to --reference-up-to) and the floor's live rows against the project's current rows.
Usage: ``python benchmarks/bench_change_events.py --sizes 100000 1000000 --repeat 2``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mib, save_results, timed
from baselines import article_change_event_resolver

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.pipeline import (
    HISTORY_TABLE_PROPERTIES,
    LEDGER_TABLE_PROPERTIES,
    history_increment,
    initial_versions,
    ledger_increment,
)
from spark_cdc.change_events.resolve import current_rows, resolve_feed
from spark_cdc.core.cache_slots import held_slots, release
from spark_cdc.generators.change_events import SCHEMA, StreamSpec, generate_stream
from spark_cdc.session.runtime import get_or_create_session

HIGH = "9999-12-31 23:59:59"
UPDATE_SHARE = 0.70


def _write_inputs(size: int, work: Path, with_expected: bool, key_changes: float):
    spec = StreamSpec(
        initial_rows=size // 10,
        events=size,
        batches=10,
        key_change_rate=key_changes / UPDATE_SHARE,
        max_chain=8,
        malformed_rate=0.0,
        seed=size,
    )
    initial, batches, expected = generate_stream(spec, with_expected=with_expected)
    columns: dict[str, list] = {
        "change_type": [],
        "event_ts": [],
        "event_seq": [],
        "column_names": [],
        "column_values": [],
        "old_key_names": [],
        "old_key_values": [],
        "_batch_id": [],
    }
    for batch_id, batch in enumerate(batches):
        for e in batch:
            columns["change_type"].append(e.change_type)
            columns["event_ts"].append(e.event_ts)
            columns["event_seq"].append(e.event_seq)
            columns["column_names"].append(e.column_names)
            columns["column_values"].append(e.column_values)
            columns["old_key_names"].append(e.old_key_names)
            columns["old_key_values"].append(e.old_key_values)
            columns["_batch_id"].append(batch_id)
    text_list = pa.list_(pa.string())
    feed_schema = pa.schema(
        [
            ("change_type", pa.string()),
            ("event_ts", pa.timestamp("us")),
            ("event_seq", pa.int64()),
            ("column_names", text_list),
            ("column_values", text_list),
            ("old_key_names", text_list),
            ("old_key_values", text_list),
            ("_batch_id", pa.int64()),
        ]
    )
    pq.write_table(pa.table(columns, schema=feed_schema), work / "feed.parquet")
    rows = list(initial.values())
    pq.write_table(
        pa.table(
            {
                "id": [r.values["id"] for r in rows],
                "name": [r.values["name"] for r in rows],
                "amount": [r.values["amount"] for r in rows],
                "created_at": [r.created_at for r in rows],
                "updated_at": [r.updated_at for r in rows],
            },
            schema=pa.schema(
                [
                    ("id", pa.int32()),
                    ("name", pa.string()),
                    ("amount", pa.int32()),
                    ("created_at", pa.timestamp("us")),
                    ("updated_at", pa.timestamp("us")),
                ]
            ),
        ),
        work / "initial.parquet",
    )
    return expected


def _project(spark, work: Path) -> None:
    """The resolver on the whole feed (resolve.resolve_feed), its current table written."""
    initial = initial_versions(spark.read.parquet(str(work / "initial.parquet")), SCHEMA, "bench")
    feed = spark.read.parquet(str(work / "feed.parquet"))
    versions, _ = resolve_feed(feed, SCHEMA, HIGH, initial)
    current_rows(versions, SCHEMA).write.format("delta").save(str(work / "current"))


def _prepare_floor_target(spark, work: Path, tombstones: bool) -> str:
    """The existing rows as the Delta table the floor merges into (written before timing)."""
    from pyspark.sql import functions as F

    path = str(work / ("floor_tombstone" if tombstones else "floor_delete"))
    rows = spark.read.parquet(str(work / "initial.parquet")).select("id", "name", "amount")
    if tombstones:
        rows = rows.withColumn("is_deleted", F.lit(False))
    rows.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
    return path


def _floor(spark, work: Path, tombstones: bool) -> None:
    """Latest event per key in one aggregate, then one Delta MERGE (no key changes only)."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    image = F.map_from_arrays("column_names", "column_values")
    key = F.coalesce(F.element_at("old_key_values", 1), image["id"]).cast("int")
    position = F.struct(
        F.col("event_ts").alias("ts"),
        F.coalesce("event_seq", F.lit(0)).alias("seq"),
        F.lower("change_type").alias("kind"),
        image["name"].alias("name"),
        image["amount"].cast("int").alias("amount"),
    )
    latest = (
        spark.read.parquet(str(work / "feed.parquet"))
        .select(key.alias("id"), position.alias("e"))
        .groupBy("id")
        .agg(F.max("e").alias("e"))
        .select("id", "e.kind", "e.name", "e.amount")
    )
    path = str(work / ("floor_tombstone" if tombstones else "floor_delete"))
    merge = DeltaTable.forPath(spark, path).alias("t").merge(latest.alias("s"), "t.id = s.id")
    values = {"name": "s.name", "amount": "s.amount"}
    if tombstones:
        merge = merge.whenMatchedUpdate(
            "s.kind = 'delete'", {"is_deleted": F.lit(True)}
        ).whenMatchedUpdate(set={**values, "is_deleted": F.lit(False)})
        insert = {"id": "s.id", **values, "is_deleted": F.lit(False)}
    else:
        merge = merge.whenMatchedDelete("s.kind = 'delete'").whenMatchedUpdate(set=values)
        insert = {"id": "s.id", **values}
    merge.whenNotMatchedInsert("s.kind <> 'delete'", values=insert).execute()


def _floor_differences(spark, work: Path, tombstones: bool) -> int:
    """Keys whose live row differs between the floor's table and the project's current table."""
    path = str(work / ("floor_tombstone" if tombstones else "floor_delete"))
    floor = spark.read.format("delta").load(path)
    if tombstones:
        floor = floor.where("not is_deleted")
    floor = floor.select("id", "name", "amount")
    project = spark.read.format("delta").load(str(work / "current")).select("id", "name", "amount")
    wrong = floor.exceptAll(project).select("id").union(project.exceptAll(floor).select("id"))
    return wrong.distinct().count()


def _pipeline(spark, work: Path) -> None:
    """What the dbt models do on a full build: ledger, history and current, each written."""
    config = SourceConfig("bench", SCHEMA)
    feed = spark.read.parquet(str(work / "feed.parquet"))
    initial = spark.read.parquet(str(work / "initial.parquet"))
    ledger_path, history_path = str(work / "ledger"), str(work / "history")
    # With the table properties the dbt models give these tables.
    ledger_rows = ledger_increment(feed, None, config, "bench")
    ledger_rows.write.format("delta").options(**LEDGER_TABLE_PROPERTIES).save(ledger_path)
    ledger = spark.read.format("delta").load(ledger_path)
    history = history_increment(ledger, None, initial, config, HIGH, "bench")
    history.write.format("delta").options(**HISTORY_TABLE_PROPERTIES).save(history_path)
    versions = spark.read.format("delta").load(history_path)
    current_rows(versions, SCHEMA).write.format("delta").save(str(work / "pipeline_current"))


def _baseline(spark, work: Path) -> None:
    from pyspark.sql import functions as F

    events = spark.read.parquet(str(work / "feed.parquet")).select(
        F.lower("change_type").alias("changeType"),
        F.col("event_ts").alias("timestamp"),
        F.col("column_names").alias("columnNames"),
        F.col("column_values").alias("columnValues"),
        F.col("old_key_names").alias("oldKeyNames"),
        F.col("old_key_values").alias("oldKeyValues"),
    )
    datalake = spark.read.parquet(str(work / "initial.parquet")).select(
        F.col("id").cast("string"),
        "name",
        F.col("amount").cast("string"),
        F.col("updated_at").alias("timestamp"),
    )
    resolved = article_change_event_resolver.resolve(datalake, events, ["id", "name", "amount"])
    resolved.write.format("delta").save(str(work / "baseline"))


def _differences(spark, work: Path) -> int:
    project = (
        spark.read.format("delta")
        .load(str(work / "current"))
        .selectExpr("cast(id as string) as id", "name", "cast(amount as string) as amount")
    )
    baseline = (
        spark.read.format("delta").load(str(work / "baseline")).select("id", "name", "amount")
    )
    missing = project.exceptAll(baseline).select("id")
    extra = baseline.exceptAll(project).select("id")
    return missing.union(extra).distinct().count()


def _check_reference(spark, work: Path, expected) -> None:
    rows = spark.read.format("delta").load(str(work / "current")).collect()
    got = {
        (r.id,): (r.name, r.amount, r.created_at, r.updated_at, r.last_change_type) for r in rows
    }
    want = {
        k: (s.values["name"], s.values["amount"], s.created_at, s.updated_at, s.last_change_type)
        for k, s in expected.state.items()
    }
    if got != want:
        wrong = sum(1 for k in got.keys() | want.keys() if got.get(k) != want.get(k))
        raise AssertionError(f"the project differs from the reference on {wrong} keys")


def _variants(args, key_changes: float, size: int) -> list[str]:
    names = ["project", "pipeline"]
    if key_changes == 0:
        names = ["floor_delete", "floor_tombstone", *names]
    if args.article and size <= args.baseline_up_to:
        names.append("article")
    return names


def _run_variant(spark, work: Path, name: str) -> None:
    if name == "project":
        shutil.rmtree(work / "current", ignore_errors=True)
        _project(spark, work)
    elif name == "pipeline":
        for folder in ("ledger", "history", "pipeline_current"):
            shutil.rmtree(work / folder, ignore_errors=True)
        _pipeline(spark, work)
    elif name == "article":
        shutil.rmtree(work / "baseline", ignore_errors=True)
        _baseline(spark, work)
    else:
        _floor(spark, work, name == "floor_tombstone")


def _measure(spark, pid: int, work: Path, names: list[str], repeat: int) -> dict:
    """Seconds and peak MiB of each variant per repetition, order reversed every repetition."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for repetition in range(repeat):
        for name in names if repetition % 2 == 0 else list(reversed(names)):
            if name.startswith("floor"):
                _prepare_floor_target(spark, work, name == "floor_tombstone")
            runs[name].append(timed(lambda n=name: _run_variant(spark, work, n), pid))
            # What a variant kept cached (its cache slots) is not left to weigh on the next one.
            for _, slot in held_slots():
                release(slot)
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--key-changes", type=float, nargs="+", default=[0.0, 0.05])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--reference-up-to", type=int, default=100_000)
    parser.add_argument("--article", action="store_true", help="also the article's algorithm")
    parser.add_argument(
        "--baseline-up-to", type=int, default=5_000_000, help="largest size run with --article"
    )
    args = parser.parse_args()
    spark = get_or_create_session()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    results = []
    for size in args.sizes:
        for key_changes in args.key_changes:
            work = Path(tempfile.mkdtemp(prefix=f"bench_change_events_{size}_"))
            try:
                results.append(_one_case(spark, pid, work, size, key_changes, args))
                print(results[-1], flush=True)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    save_results(
        "change_events", {"results": results, "driver_peak_rss_mib": round(peak_rss_mib())}
    )
    return 0


def _one_case(spark, pid: int, work: Path, size: int, key_changes: float, args) -> dict:
    started = time.perf_counter()
    with_expected = size <= args.reference_up_to
    expected = _write_inputs(size, work, with_expected, key_changes)
    print(
        f"[{size:,} events, {key_changes:.0%} key changes] generated in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    # Warm-up: the JVM's first queries of each kind run interpreted.
    _run_variant(spark, work, "project")
    names = _variants(args, key_changes, size)
    runs = _measure(spark, pid, work, names, args.repeat)
    if expected is not None:
        _check_reference(spark, work, expected)
    row: dict = {"events": size, "key_changes": key_changes, "reference_checked": with_expected}
    medians = {name: statistics.median(s for s, _ in runs[name]) for name in names}
    for name in names:
        row[f"{name}_s"] = round(medians[name], 1)
        row[f"{name}_runs_s"] = [round(s, 1) for s, _ in runs[name]]
        row[f"{name}_events_per_s"] = round(size / medians[name])
        row[f"{name}_peak_jvm_mib"] = round(max(m for _, m in runs[name]))
    if "floor_delete" in medians:
        for name in ("project", "pipeline"):
            row[f"{name}_vs_floor_delete"] = round(medians[name] / medians["floor_delete"], 2)
            row[f"{name}_vs_floor_tombstone"] = round(medians[name] / medians["floor_tombstone"], 2)
        row["floor_delete_keys_differing"] = _floor_differences(spark, work, False)
        row["floor_tombstone_keys_differing"] = _floor_differences(spark, work, True)
    if "article" in medians:
        row["article_keys_wrong"] = _differences(spark, work)
    return row


if __name__ == "__main__":
    sys.exit(main())
