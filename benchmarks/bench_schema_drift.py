"""Schema drift: registry + silver refresh against a naive per-run schema inference, same run.

Generates two batches of JSON events (``--events`` each) across ``--event-types`` event types;
the second carries a new variation (a new attribute) in ``--new-variation-rate`` of its events.
Both are landed as JSON-lines files and taken into bronze (spark_cdc.schema_drift.bronze: the
variation hash is computed there, timed on its own). Then, per batch:

- project: the registry increment (merged into a Delta registry on event type + hash) and the
  silver refresh (spark_cdc.schema_drift.silver: one Delta table per event type);
- baseline (benchmarks/baselines/naive_schema_inference.py): Spark JSON inference over every
  payload of the batch per event type, parse, append with mergeSchema.

Reports seconds, the speed-up (baseline / project) of the refresh of the second batch, events/s
and the driver JVM's peak resident memory (reset between runs), and checks that both wrote the
same number of rows.
Usage: ``python benchmarks/bench_schema_drift.py --events 1000000 --event-types 50``
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results, timed
from baselines import naive_schema_inference
from delta.tables import DeltaTable
from pyspark.sql import functions as F

from spark_cdc.generators.json_events import JsonEventSpec, write_batches
from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.registry import registry_increment
from spark_cdc.schema_drift.silver import METADATA_COLUMNS, refresh_silver
from spark_cdc.session.runtime import get_or_create_session

DATABASE = "bench_schema_drift"
BRONZE = f"{DATABASE}.bronze"
REGISTRY = f"{DATABASE}.registry"
LOG = f"{DATABASE}.silver_loads"


def _raw(spark, folder: Path):
    return spark.read.text(str(folder)).select(
        F.col("value").alias("payload"),
        F.col("_metadata.file_path").alias("source_file"),
        F.lit(folder.name).alias("batch_id"),
        F.col("_metadata.file_modification_time").alias("file_modified_at"),
    )


def _ingest(spark, folder: Path) -> None:
    existing = spark.table(BRONZE) if spark.catalog.tableExists(BRONZE) else None
    increment = bronze_increment(_raw(spark, folder), existing, "bench")
    increment.write.format("delta").mode("append").saveAsTable(BRONZE)


def _project_refresh(spark) -> None:
    bronze = spark.table(BRONZE)
    existing = spark.table(REGISTRY) if spark.catalog.tableExists(REGISTRY) else None
    rows = registry_increment(spark, bronze, existing, "bench", METADATA_COLUMNS)
    if existing is None:
        rows.write.format("delta").saveAsTable(REGISTRY)
    else:
        condition = "t.event_type = s.event_type and t.variation_hash = s.variation_hash"
        DeltaTable.forName(spark, REGISTRY).alias("t").merge(
            rows.alias("s"), condition
        ).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute()
    log = spark.table(LOG) if spark.catalog.tableExists(LOG) else None
    written = refresh_silver(
        spark, bronze, spark.table(REGISTRY), log, DATABASE, "silver__", "bench", log_table=LOG
    )
    written.write.format("delta").mode("append").saveAsTable(LOG)


def _silver_rows(spark, prefix: str) -> int:
    tables = [t.name for t in spark.catalog.listTables(DATABASE) if t.name.startswith(prefix)]
    return sum(spark.table(f"{DATABASE}.{name}").count() for name in tables)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events per batch")
    parser.add_argument("--event-types", type=int, default=50)
    parser.add_argument("--new-variation-rate", type=float, default=0.05)
    args = parser.parse_args()
    spark = get_or_create_session()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    work = Path(tempfile.mkdtemp(prefix="bench_schema_drift_"))
    try:
        spec = JsonEventSpec(
            events=2 * args.events,
            event_types=args.event_types,
            new_event_types=0,
            batches=2,
            new_variation_rate=args.new_variation_rate,
            malformed_rate=0.0,
            type_conflicts=False,
            seed=7,
        )
        folders = write_batches(work / "landing", spec, show_progress=True)
        spark.sql(f"drop database if exists {DATABASE} cascade")
        spark.sql(f"create database {DATABASE}")
        figures: dict[str, dict[str, float]] = {}
        for number, folder in enumerate(folders, start=1):
            seconds, peak = timed(lambda folder=folder: _ingest(spark, folder), pid)
            figures[f"bronze_{number}"] = {"seconds": seconds, "peak_mib": peak}
            seconds, peak = timed(lambda: _project_refresh(spark), pid)
            figures[f"project_{number}"] = {"seconds": seconds, "peak_mib": peak}
            events = spark.table(BRONZE).where(f"load_seq = {number}")

            def naive(events=events) -> None:
                naive_schema_inference.refresh(spark, events, DATABASE)

            seconds, peak = timed(naive, pid)
            figures[f"baseline_{number}"] = {"seconds": seconds, "peak_mib": peak}
            for name, values in figures.items():
                if name.endswith(str(number)):
                    print(f"{name}: {values['seconds']:.1f} s, peak {values['peak_mib']:.0f} MiB")
        project_rows, naive_rows = _silver_rows(spark, "silver__"), _silver_rows(spark, "naive_")
        if project_rows != naive_rows:
            raise RuntimeError(f"rows differ: project {project_rows}, baseline {naive_rows}")
        second = figures["baseline_2"]["seconds"] / figures["project_2"]["seconds"]
        result = {
            "events_per_batch": args.events,
            "event_types": args.event_types,
            "new_variation_rate": args.new_variation_rate,
            "figures": figures,
            "speedup_second_batch": second,
            "project_events_per_s": args.events / figures["project_2"]["seconds"],
            "baseline_events_per_s": args.events / figures["baseline_2"]["seconds"],
            "bronze_events_per_s": args.events / figures["bronze_2"]["seconds"],
            "silver_rows": project_rows,
        }
        print(
            f"second batch: project {figures['project_2']['seconds']:.1f} s, baseline "
            f"{figures['baseline_2']['seconds']:.1f} s, speed-up {second:.2f}x; bronze with "
            f"variation hashes {figures['bronze_2']['seconds']:.1f} s"
        )
        save_results(f"schema_drift_{args.events}", result)
    finally:
        spark.sql(f"drop database if exists {DATABASE} cascade")
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
