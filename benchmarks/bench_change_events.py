"""Change-event resolution: this project's resolver against a port of the article's, same run.

For each size, the stream generator (spark_cdc.generators.change_events) makes N events over
N/10 existing rows: 15% inserts, 5% re-inserts of deleted keys, 10% deletes, 70% updates of which
enough change the key for 5% of all events to be key changes (chains up to 8 moves), 2% exact
duplicates, 2% ties on event_ts (ordered by event_seq), 10 batches shuffled inside, some
delivered late. Both read the same Parquet copy of the feed and of the existing rows:

- baseline (benchmarks/baselines/article_change_event_resolver.py): the article's iterative
  algorithm, writing its resolved table (Delta);
- project (spark_cdc.change_events.resolve.resolve_feed): validation, then the window resolver
  (duplicates dropped in its window, pointer jumping for created_at), its current table written
  (Delta);
- pipeline (what the dbt models do on a full build, reported apart): the ledger of every event
  with its status, the SCD2 history and the current table, each written (Delta).

Reports seconds, speed-up (baseline / project), events/s and peak resident memory (driver JVM,
reset between runs); checks the project's current table against the plain-Python reference
(sizes up to --reference-up-to) and counts the keys where the baseline's table differs from it.
Usage: ``python benchmarks/bench_change_events.py --sizes 100000 1000000 5000000``
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mib, save_results, timed
from baselines import article_change_event_resolver

from spark_cdc.change_events.pipeline import (
    SourceConfig,
    history_increment,
    initial_versions,
    ledger_increment,
)
from spark_cdc.change_events.resolve import current_rows, resolve_feed
from spark_cdc.generators.change_events import SCHEMA, StreamSpec, generate_stream
from spark_cdc.runtime import get_or_create_session

HIGH = "9999-12-31 23:59:59"
KEY_CHANGE_SHARE_OF_UPDATES = 0.05 / 0.70


def _write_inputs(size: int, work: Path, with_expected: bool):
    spec = StreamSpec(
        initial_rows=size // 10,
        events=size,
        batches=10,
        key_change_rate=KEY_CHANGE_SHARE_OF_UPDATES,
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


def _pipeline(spark, work: Path) -> None:
    """What the dbt models do on a full build: ledger, history and current, each written."""
    config = SourceConfig("bench", SCHEMA)
    feed = spark.read.parquet(str(work / "feed.parquet"))
    initial = spark.read.parquet(str(work / "initial.parquet"))
    ledger_path, history_path = str(work / "ledger"), str(work / "history")
    ledger_increment(feed, None, config, "bench").write.format("delta").save(ledger_path)
    ledger = spark.read.format("delta").load(ledger_path)
    history = history_increment(ledger, None, initial, config, HIGH, "bench")
    history.write.format("delta").save(history_path)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--reference-up-to", type=int, default=100_000)
    parser.add_argument(
        "--baseline-up-to", type=int, default=5_000_000, help="largest size run with baseline"
    )
    args = parser.parse_args()
    spark = get_or_create_session()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    results = []
    for size in args.sizes:
        work = Path(tempfile.mkdtemp(prefix=f"bench_change_events_{size}_"))
        try:
            started = time.perf_counter()
            expected = _write_inputs(size, work, with_expected=size <= args.reference_up_to)
            print(f"[{size:,} events] generated in {time.perf_counter() - started:.0f} s")
            project_s, project_mib = timed(lambda w=work: _project(spark, w), pid)
            if expected is not None:
                _check_reference(spark, work, expected)
            row = {
                "events": size,
                "project_s": round(project_s, 1),
                "project_events_per_s": round(size / project_s),
                "project_peak_jvm_mib": round(project_mib),
                "reference_checked": expected is not None,
            }
            pipeline_s, pipeline_mib = timed(lambda w=work: _pipeline(spark, w), pid)
            row.update(
                pipeline_s=round(pipeline_s, 1),
                pipeline_events_per_s=round(size / pipeline_s),
                pipeline_peak_jvm_mib=round(pipeline_mib),
            )
            if size <= args.baseline_up_to:
                baseline_s, baseline_mib = timed(lambda w=work: _baseline(spark, w), pid)
                row.update(
                    baseline_s=round(baseline_s, 1),
                    baseline_events_per_s=round(size / baseline_s),
                    baseline_peak_jvm_mib=round(baseline_mib),
                    speedup=round(baseline_s / project_s, 1),
                    baseline_keys_wrong=_differences(spark, work),
                )
            results.append(row)
            print(row, flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    save_results(
        "change_events", {"results": results, "driver_peak_rss_mib": round(peak_rss_mib())}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
