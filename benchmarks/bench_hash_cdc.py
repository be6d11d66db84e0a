"""Hash CDC: the project against the Delta-native way (MERGE + Change Data Feed), same run.

For each size, the extract generator writes day 1 and day 2 as CSV (15 columns: 5 UUID keys, 10
numbers; day 2: 20% deleted, 40% updated, 40% unchanged, deleted keys replaced by inserts). Each
variant processes day 1 (initial load) and day 2 (compare), each timed:

- project (spark_cdc.hash_cdc): read_extract, stage 1 (try_cast, MD5 hashes, quarantine reasons,
  duplicate-key check), the compare (one full outer join of the staged and the current rows,
  each read once), the current table written (Delta,
  tombstones kept, statistics on the operation and the date) and the day's history partition
  (replaceWhere on the date);
- merge_delete: what a Spark engineer writes with Delta alone: the CSV read and cast, MD5 of the
  keys and of the non-keys; day 1 writes the table with Change Data Feed on; day 2 is one
  ``MERGE ON key_hash WHEN MATCHED AND nonkey_hash differs THEN UPDATE WHEN NOT MATCHED THEN
  INSERT WHEN NOT MATCHED BY SOURCE THEN DELETE``, then the MERGE's version read back from the
  change feed and written as the day's history (insert -> I, update_postimage -> U, delete -> D);
  no quarantine, no duplicate-key check (a duplicate key fails the MERGE);
- merge_tombstone: the same MERGE keeping deleted rows as tombstones (``is_deleted``), as the
  project does: not matched by source and live -> is_deleted = true; a tombstone supplied again
  is updated back to live (its history row reads U where the project's reads I: the generated
  days hold no such key);
- article (``--article``; benchmarks/baselines/article_hash_cdc.py): the article's approach
  (Python RDD map for casting and hashing, Parquet), for reference.

Each variant runs --repeat times (default 2) after an untimed warm-up on a small extract, the order
reversed every repetition. Reported: median seconds per day and each repetition's, ratios of the
project to each MERGE variant (day 2) and to the MERGE table's initial write (day 1), rows/s and
peak resident memory (driver JVM, reset before each day). Checked after day 2, for every MERGE
variant against the project: the live rows (keys and values), the day's I/U/D/N counts and the
day's history rows (keys, values, operation) are equal.
Usage: ``python benchmarks/bench_hash_cdc.py --sizes 100000 1000000`` (``--sizes 10000000``
optional: about 10 times the 1M run).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results, timed
from baselines import article_hash_cdc

from spark_cdc.generators.extracts import ExtractSpec, generate_extracts
from spark_cdc.hash_cdc.compare import (
    HISTORY_TABLE_PROPERTIES,
    TABLE_PROPERTIES,
    apply_extract,
)
from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.extracts import read_extract
from spark_cdc.hash_cdc.stage import REASON, stage_extract
from spark_cdc.session.runtime import get_or_create_session

KEYS = {f"key_{i}": "string" for i in range(1, 6)}
NONKEYS = {f"attr_{i}": "bigint" for i in range(1, 11)}
PAYLOAD = [*KEYS, *NONKEYS]
DATES = ("2019-06-18", "2019-06-19")
MERGE_VARIANTS = ("merge_delete", "merge_tombstone")
WARM_UP_ROWS = 10_000


# --- the project -------------------------------------------------------------------------------


def _project_day(spark, folder: Path, day: int, work: Path) -> None:
    config = DatasetConfig.from_mapping("bench", {"key_columns": KEYS, "nonkey_columns": NONKEYS})
    staged = stage_extract(read_extract(spark, folder, config), config, DATES[day])
    previous = None if day == 0 else spark.read.format("delta").load(str(work / "current_0"))
    current = apply_extract(staged.where(f"{REASON} is null"), previous, config, DATES[day])
    current.write.format("delta").options(**TABLE_PROPERTIES).mode("overwrite").save(
        str(work / f"current_{day}")
    )
    changes = (
        spark.read.format("delta")
        .load(str(work / f"current_{day}"))
        .where(f"eff_start_date = '{DATES[day]}' and operation != 'N'")
    )
    writer = changes.write.format("delta").options(**HISTORY_TABLE_PROPERTIES)
    if day == 0:
        writer = writer.mode("overwrite").partitionBy("eff_start_date")
    else:
        writer = writer.mode("overwrite").option("replaceWhere", f"eff_start_date = '{DATES[day]}'")
    writer.save(str(work / "history"))


def _project_live(spark, work: Path):
    return spark.read.format("delta").load(str(work / "current_1")).where("operation != 'D'")


def _project_operations(spark, work: Path) -> dict[str, int]:
    frame = spark.read.format("delta").load(str(work / "current_1"))
    frame = frame.where(f"operation = 'N' or eff_start_date = '{DATES[1]}'")
    return {r[0]: r[1] for r in frame.groupBy("operation").count().collect()}


def _project_history(spark, work: Path):
    return (
        spark.read.format("delta")
        .load(str(work / "history"))
        .where(f"eff_start_date = '{DATES[1]}'")
    )


# --- the Delta-native way ----------------------------------------------------------------------


def _merge_source(spark, folder: Path, tombstones: bool):
    from pyspark.sql import functions as F

    raw = spark.read.option("header", True).csv(str(folder))
    typed = [F.col(c).cast(kind).alias(c) for c, kind in {**KEYS, **NONKEYS}.items()]
    separator = "\u001f"
    key_hash = F.md5(F.concat_ws(separator, *(F.col(c) for c in KEYS)))
    # concat_ws skips NULLs: NULL-safe because each value is rendered with a marker for NULL.
    nonkey_hash = F.md5(
        F.concat_ws(
            separator, *(F.coalesce(F.col(c).cast("string"), F.lit("\u0000")) for c in NONKEYS)
        )
    )
    frame = raw.select(*typed).select(
        *PAYLOAD, key_hash.alias("key_hash"), nonkey_hash.alias("nonkey_hash")
    )
    return frame.withColumn("is_deleted", F.lit(False)) if tombstones else frame


def _merge_day(spark, folder: Path, day: int, work: Path, tombstones: bool) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    table_path, history_path = str(work / "table"), str(work / "history")
    source = _merge_source(spark, folder, tombstones)
    if day == 0:
        source.write.format("delta").option("delta.enableChangeDataFeed", "true").save(table_path)
        return
    table = DeltaTable.forPath(spark, table_path)
    changed = "t.nonkey_hash <> s.nonkey_hash"
    merge = table.alias("t").merge(source.alias("s"), "t.key_hash = s.key_hash")
    if tombstones:
        merge = (
            merge.whenMatchedUpdateAll(f"t.is_deleted or {changed}")
            .whenNotMatchedInsertAll()
            .whenNotMatchedBySourceUpdate("not t.is_deleted", {"is_deleted": F.lit(True)})
        )
    else:
        merge = (
            merge.whenMatchedUpdateAll(changed)
            .whenNotMatchedInsertAll()
            .whenNotMatchedBySourceDelete()
        )
    merge.execute()
    version = table.history(1).select("version").first()[0]
    kind = F.col("_change_type")
    operation = F.when(kind == "insert", "I").when(kind == "delete", "D")
    if tombstones:
        operation = operation.when(F.col("is_deleted"), "D")
    changes = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", version)
        .option("endingVersion", version)
        .load(table_path)
        .where(kind != "update_preimage")
        .select(
            *PAYLOAD,
            operation.otherwise("U").alias("operation"),
            F.to_date(F.lit(DATES[day])).alias("eff_start_date"),
        )
    )
    changes.write.format("delta").mode("append").partitionBy("eff_start_date").save(history_path)


def _merge_live(spark, work: Path, tombstones: bool):
    table = spark.read.format("delta").load(str(work / "table"))
    return table.where("not is_deleted") if tombstones else table


def _merge_operations(spark, work: Path, tombstones: bool) -> dict[str, int]:
    history = spark.read.format("delta").load(str(work / "history"))
    counts = {r[0]: r[1] for r in history.groupBy("operation").count().collect()}
    live = _merge_live(spark, work, tombstones).count()
    counts["N"] = live - counts.get("I", 0) - counts.get("U", 0)
    return counts


# --- variants, checks, report ------------------------------------------------------------------


def _run_day(spark, variant: str, folder: Path, day: int, work: Path) -> None:
    if day == 0:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    if variant == "project":
        _project_day(spark, folder, day, work)
    elif variant == "article":
        current = None if day == 0 else work / "out_0" / "current"
        article_hash_cdc.run(spark, folder, current, work / f"out_{day}", KEYS, NONKEYS, DATES[day])
    else:
        _merge_day(spark, folder, day, work, variant == "merge_tombstone")


def _differences(left, right) -> int:
    """Rows in one frame and not the other (multiset), both ways."""
    return left.exceptAll(right).count() + right.exceptAll(left).count()


def _check(spark, root: Path, variants: list[str]) -> dict:
    """Live rows, operation counts and the day's history rows of each MERGE variant against the
    project's, after day 2."""
    project = root / "project"
    expected_ops = _project_operations(spark, project)
    live = _project_live(spark, project).select(*PAYLOAD)
    history = _project_history(spark, project).select(*PAYLOAD, "operation")
    checks = {"project_operations": expected_ops}
    for variant in variants:
        if variant not in MERGE_VARIANTS:
            continue
        work, tombstones = root / variant, variant == "merge_tombstone"
        ops = _merge_operations(spark, work, tombstones)
        theirs = _merge_live(spark, work, tombstones).select(*PAYLOAD)
        their_history = spark.read.format("delta").load(str(work / "history"))
        checks[variant] = {
            "same_operations": ops == expected_ops,
            "live_rows_differing": _differences(live, theirs),
            "history_rows_differing": _differences(history, their_history.select(*history.columns)),
        }
        if not checks[variant]["same_operations"]:
            checks[variant]["operations"] = ops
    return checks


def _generate(root: Path, size: int) -> list[Path]:
    days = [root / "landing" / date for date in DATES]
    generate_extracts(
        ExtractSpec(size, size, 5, 10, 0.2, 0.4, 0.4, tuple(days), seed=size),
        show_progress=False,
    )
    return days


def _measure(spark, pid: int, root: Path, days: list[Path], variants: list[str], repeat: int):
    """Per variant and day: (seconds, peak MiB) of each repetition, order reversed each time."""
    runs = {(v, d): [] for v in variants for d in (0, 1)}
    for repetition in range(repeat):
        for variant in variants if repetition % 2 == 0 else list(reversed(variants)):
            for day, folder in enumerate(days):
                action = lambda v=variant, f=folder, d=day: _run_day(spark, v, f, d, root / v)  # noqa: E731
                runs[(variant, day)].append(timed(action, pid))
    return runs


def _warm_up(spark, variants: list[str]) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench_hash_cdc_warm_up_"))
    try:
        days = _generate(root, WARM_UP_ROWS)
        for variant in variants:
            for day, folder in enumerate(days):
                _run_day(spark, variant, folder, day, root / variant)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _one_size(spark, pid: int, size: int, variants: list[str], repeat: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"bench_hash_cdc_{size}_"))
    try:
        started = time.perf_counter()
        days = _generate(root, size)
        print(f"[{size:,} rows] generated in {time.perf_counter() - started:.0f} s", flush=True)
        runs = _measure(spark, pid, root, days, variants, repeat)
        checks = _check(spark, root, variants)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures: dict = {"rows": size, "checks": checks}
    for (variant, day), measured in runs.items():
        seconds = [s for s, _ in measured]
        label = f"{variant}_day{day + 1}"
        figures[f"{label}_s"] = round(statistics.median(seconds), 1)
        figures[f"{label}_runs_s"] = [round(s, 1) for s in seconds]
        figures[f"{label}_rows_per_s"] = round(size / statistics.median(seconds))
        figures[f"{label}_peak_jvm_mib"] = round(max(m for _, m in measured))
    for other in (v for v in variants if v != "project"):
        for day in (1, 2):
            ratio = figures[f"project_day{day}_s"] / figures[f"{other}_day{day}_s"]
            figures[f"project_vs_{other}_day{day}"] = round(ratio, 2)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--article", action="store_true", help="also the article's approach")
    args = parser.parse_args()
    variants = ["project", *MERGE_VARIANTS, *(["article"] if args.article else [])]
    spark = get_or_create_session()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    _warm_up(spark, variants)
    results = []
    for size in args.sizes:
        results.append(_one_size(spark, pid, size, variants, args.repeat))
        print(results[-1], flush=True)
        failed = {
            v: c
            for v, c in results[-1]["checks"].items()
            if v in MERGE_VARIANTS
            and (
                not c["same_operations"] or c["live_rows_differing"] or c["history_rows_differing"]
            )
        }
        if failed:
            raise SystemExit(f"outputs differ from the project's at {size:,} rows: {failed}")
    save_results("hash_cdc", {"results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
