"""Hash CDC: the project's implementation against a port of the article's approach, same run.

For each size, the extract generator writes day 1 and day 2 (15 columns: 5 UUID keys, 10 numbers;
day 2: 20% deleted, 40% updated, 40% unchanged, deleted keys replaced by inserts) as CSV. Each
implementation then processes day 1 (initial load) and day 2 (compare), reading the CSV and writing
its current state and history partition:

- baseline (benchmarks/baselines/article_hash_cdc.py): cast + MD5 per row in a Python RDD map,
  full outer join of hashes, one write per operation stage (Parquet);
- project (spark_cdc.hash_cdc): try_cast + MD5 with Spark column functions (staged rows cached,
  as the baseline caches its own), one full outer join of hashes, one payload rejoin, one write
  of the current state and of the history partition (Delta, statistics on the operation and the
  date only, as the dbt models configure them).

Reports seconds, speed-up (baseline / project), rows/s and peak resident memory (driver JVM, reset
between runs), and checks both found the same day-2 operation counts.
Usage: ``python benchmarks/bench_hash_cdc.py --sizes 100000 1000000 10000000``
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_mib, reset_peak, save_results
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
from spark_cdc.runtime import get_or_create_session

KEYS = {f"key_{i}": "string" for i in range(1, 6)}
NONKEYS = {f"attr_{i}": "bigint" for i in range(1, 11)}
DATES = ("2019-06-18", "2019-06-19")


def _project_day(spark, folder: Path, day: int, work: Path) -> None:
    config = DatasetConfig.from_mapping("bench", {"key_columns": KEYS, "nonkey_columns": NONKEYS})
    # Stage 1 is computed once and kept for stages 2-4, as the baseline caches its staged rows
    # (the dbt models materialize it as the staging table instead).
    staged = stage_extract(read_extract(spark, folder, config), config, DATES[day]).persist()
    previous = None if day == 0 else spark.read.format("delta").load(str(work / "current_0"))
    current = apply_extract(staged.where(f"{REASON} is null"), previous, config, DATES[day])
    current.write.format("delta").options(**TABLE_PROPERTIES).mode("overwrite").save(
        str(work / f"current_{day}")
    )
    spark.read.format("delta").load(str(work / f"current_{day}")).where(
        f"eff_start_date = '{DATES[day]}' and operation != 'N'"
    ).write.format("delta").options(**HISTORY_TABLE_PROPERTIES).mode("overwrite").partitionBy(
        "eff_start_date"
    ).save(str(work / "history"))
    staged.unpersist()


def _baseline_day(spark, folder: Path, day: int, work: Path) -> None:
    current = None if day == 0 else work / "out_0" / "current"
    article_hash_cdc.run(spark, folder, current, work / f"out_{day}", KEYS, NONKEYS, DATES[day])


def _day2_counts(spark, variant: str, work: Path) -> dict[str, int]:
    if variant == "project":
        frame = spark.read.format("delta").load(str(work / "current_1"))
        frame = frame.where(f"operation = 'N' or eff_start_date = '{DATES[1]}'")
        column = "operation"
    else:
        frame = spark.read.parquet(str(work / "out_1" / "current"))
        column = "OPERATION"
    return {r[0]: r[1] for r in frame.groupBy(column).count().collect()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    args = parser.parse_args()
    spark = get_or_create_session()
    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    report: dict[str, dict] = {}
    for size in args.sizes:
        root = Path(tempfile.mkdtemp(prefix=f"bench_hash_cdc_{size}_"))
        days = [root / "landing" / date for date in DATES]
        generate_extracts(
            ExtractSpec(size, size, 5, 10, 0.2, 0.4, 0.4, tuple(days), seed=size),
            show_progress=False,
        )
        figures: dict[str, dict] = {}
        for variant, run_day in (("baseline", _baseline_day), ("project", _project_day)):
            work = root / variant
            work.mkdir()
            reset_peak(jvm_pid)
            seconds = []
            for day, folder in enumerate(days):
                started = time.perf_counter()
                run_day(spark, folder, day, work)
                seconds.append(time.perf_counter() - started)
            figures[variant] = {
                "day1_s": seconds[0],
                "day2_s": seconds[1],
                "day2_rows_per_s": size / seconds[1],
                "peak_jvm_rss_mib": peak_mib(jvm_pid),
                "day2_operations": _day2_counts(spark, variant, work),
            }
            print(
                f"{size:>10,} {variant:>8}: day 1 {seconds[0]:7.1f} s, day 2 {seconds[1]:7.1f} s "
                f"({size / seconds[1]:,.0f} rows/s), peak JVM "
                f"{figures[variant]['peak_jvm_rss_mib']:,.0f} MiB, "
                f"ops {figures[variant]['day2_operations']}",
                flush=True,
            )
        base, mine = figures["baseline"], figures["project"]
        figures["speedup_day2"] = base["day2_s"] / mine["day2_s"]
        figures["speedup_total"] = (base["day1_s"] + base["day2_s"]) / (
            mine["day1_s"] + mine["day2_s"]
        )
        figures["same_operations"] = base["day2_operations"] == mine["day2_operations"]
        print(
            f"{size:>10,} speed-up day 2 {figures['speedup_day2']:.1f}x, both days "
            f"{figures['speedup_total']:.1f}x, same operations: {figures['same_operations']}",
            flush=True,
        )
        report[str(size)] = figures
        shutil.rmtree(root, ignore_errors=True)
    save_results("hash_cdc", {"sizes": report})
    return 0


if __name__ == "__main__":
    sys.exit(main())
