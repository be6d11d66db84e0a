"""One event group's query of bench_schema_drift_stream.py in a process of its own (its own
Spark driver, the metastore shared with the ingest's process), as ``spark-cdc stream
schema-drift FEED --group NAME`` runs it on a cluster of its own.

It says it started (``<work>/marks/<group>.started``) once its query runs. After each micro-batch
it appends one JSON line to ``<work>/marks/<group>.jsonl``: when the batch
ended and how far the group's log holds each event type. When ``<work>/stop`` appears it takes
in what bronze holds, stops, and writes ``<work>/marks/<group>.done`` (its JVM's peak memory).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import jvm_peak_rss_mib
from pyspark.sql import functions as F

from spark_cdc.schema_drift.event_groups import parse_grouping
from spark_cdc.schema_drift.stream import FeedTables, start_group_stream
from spark_cdc.session.runtime import get_or_create_session


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--groups", type=int, required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--trigger-interval", required=True)
    parser.add_argument("--extra", required=True, help="session settings, JSON")
    args = parser.parse_args()

    spark = get_or_create_session(home=args.home, extra=json.loads(args.extra))
    grouping = parse_grouping(
        {f"bucket_{i}": [f"hash:{i}/{args.groups}"] for i in range(args.groups)}
    )
    tables = FeedTables(args.database, "bench", "silver__").of_group(args.group)
    marks = args.work / "marks" / f"{args.group}.jsonl"
    marks.parent.mkdir(parents=True, exist_ok=True)

    def after(_batch: int) -> None:
        ended = time.time()
        rows = spark.table(tables.silver_loads).groupBy("event_type").agg(F.max("to_load_seq"))
        through = {row[0]: row[1] for row in rows.collect()}
        with marks.open("a") as out:
            out.write(json.dumps({"ended": ended, "through": through}) + "\n")

    run = start_group_stream(
        spark,
        tables,
        grouping,
        args.work / "groups" / args.group,
        trigger_interval=args.trigger_interval,
        after_batch=after,
    )
    (args.work / "marks" / f"{args.group}.started").touch()
    while not (args.work / "stop").exists():
        if run.query.exception() is not None:
            raise run.query.exception()
        time.sleep(1)
    run.query.processAllAvailable()
    run.query.stop()
    run.finish()
    done = {"peak_jvm_mib": jvm_peak_rss_mib(spark)}
    (args.work / "marks" / f"{args.group}.done").write_text(json.dumps(done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
