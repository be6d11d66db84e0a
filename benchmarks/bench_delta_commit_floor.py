"""The per-type floor of a schema-drift micro-batch: one Delta append per event type.

A micro-batch that holds events of T event types commits to T silver tables (one Delta commit
each: a write job, a commit to the table's log, a snapshot update). This script measures that
floor alone, without parsing or bronze: ``--tables`` Delta tables of a few columns, then rounds
in which each table gets one append of ``--rows`` rows, its tables written ``--writers`` at a
time (as the stream's silver refresh writes them), for each writer count given. Reported per
writer count: the median round's wall time, per table, and the driver's CPU seconds per table
(this process and the JVM, from /proc: what the cores must give whatever the parallelism).

Usage: ``python benchmarks/bench_delta_commit_floor.py --tables 300 --writers 1 4 8``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results

from spark_cdc.session.runtime import get_or_create_session

DATABASE = "bench_delta_commit_floor"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--rows", type=int, default=20, help="rows per append")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()

    spark = get_or_create_session()
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    names = [f"{DATABASE}.t_{number:03d}" for number in range(args.tables)]
    spark.sql(f"drop database if exists {DATABASE} cascade")
    spark.sql(f"create database {DATABASE}")
    rows = spark.range(args.rows).selectExpr(
        "id", "cast(id as string) as name", "id * 1.5 as score", "current_timestamp() as at"
    )

    def append(table: str) -> None:
        rows.write.format("delta").mode("append").saveAsTable(table)

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:  # the tables exist before the rounds
            list(pool.map(append, names))
        results = {}
        for writers in args.writers:
            walls, cpus = [], []
            for _ in range(args.rounds):
                cpu_before = _cpu_seconds(os.getpid()) + _cpu_seconds(jvm_pid)
                started = time.perf_counter()
                with ThreadPoolExecutor(max_workers=writers) as pool:
                    list(pool.map(append, names))
                walls.append(time.perf_counter() - started)
                cpus.append(_cpu_seconds(os.getpid()) + _cpu_seconds(jvm_pid) - cpu_before)
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            results[str(writers)] = {
                "round_wall_s": wall,
                "wall_s_per_table": wall / args.tables,
                "cpu_s_per_table": cpu / args.tables,
            }
            print(
                f"{writers} writers: a round of {args.tables} appends {wall:.1f} s "
                f"({wall / args.tables:.3f} s a table, {cpu / args.tables:.3f} CPU s a table)",
                flush=True,
            )
        save_results(
            f"delta_commit_floor_{args.tables}_tables",
            {
                "tables": args.tables,
                "rows_per_append": args.rows,
                "rounds": args.rounds,
                "cpus": os.cpu_count(),
                "by_writers": results,
            },
        )
    finally:
        spark.sql(f"drop database if exists {DATABASE} cascade")
    return 0


if __name__ == "__main__":
    sys.exit(main())
