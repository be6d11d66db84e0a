"""The per-type floor of a schema-drift micro-batch: one Delta append per event type, and what
Delta's own settings take off it.

A micro-batch that holds events of T event types commits to T silver tables (one Delta commit
each: a write job, a commit to the table's log, a snapshot update, and every
``delta.checkpointInterval`` commits a checkpoint). This script measures that floor alone,
without parsing or bronze: ``--tables`` Delta tables of a few columns, then ``--rounds`` rounds
in which each table gets one append of ``--rows`` rows, its tables written ``--writers`` at a
time (as the stream's silver refresh writes them). The rounds are enough for every table to pass
a checkpoint at Delta's default interval (10), so the mean round carries the checkpoints' share.

Each of ``--settings`` builds the tables again and runs the rounds with Delta settings applied:

- ``default``: Delta 4.4 as it ships (commit statistics are already off: ``commitStats.force``
  false; the commit checksum is written incrementally, with the file list below 50 files);
- ``checkpoint_interval_100``: the tables' ``delta.checkpointInterval`` 100 (no checkpoint in the
  rounds; a reader replays up to 100 small JSON commits);
- ``no_operation_metrics``: ``spark.databricks.delta.history.metricsEnabled`` false;
- ``no_file_statistics``: the tables' ``delta.dataSkippingNumIndexedCols`` 0 (no min/max per file);
- ``combined``: the three together.

Reported per setting and writer count: the mean and median round's wall time, per table, the
driver's CPU seconds per table (this process and the JVM, from /proc: what the cores must give
whatever the parallelism) and the Spark jobs per table (Spark's status tracker).

Usage: ``python benchmarks/bench_delta_commit_floor.py --tables 300 --writers 4 --settings default
checkpoint_interval_100 no_operation_metrics no_file_statistics combined``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results
from pyspark.sql import SparkSession

from spark_cdc.session.runtime import get_or_create_session

DATABASE = "bench_delta_commit_floor"
SESSION_SETTINGS: dict[str, dict[str, str]] = {
    "no_operation_metrics": {"spark.databricks.delta.history.metricsEnabled": "false"},
}
TABLE_SETTINGS: dict[str, dict[str, str]] = {
    "checkpoint_interval_100": {"delta.checkpointInterval": "100"},
    "no_file_statistics": {"delta.dataSkippingNumIndexedCols": "0"},
}
SETTINGS = ("default", *SESSION_SETTINGS, *TABLE_SETTINGS, "combined")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settings_of(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """(session confs, table properties) of a setting."""
    if name == "combined":
        session = {k: v for confs in SESSION_SETTINGS.values() for k, v in confs.items()}
        table = {k: v for props in TABLE_SETTINGS.values() for k, v in props.items()}
        return session, table
    return SESSION_SETTINGS.get(name, {}), TABLE_SETTINGS.get(name, {})


def _last_job_id(spark: SparkSession) -> int:
    """The newest Spark job's id (jobs are numbered in order; none run in a job group)."""
    return max(spark.sparkContext.statusTracker().getJobIdsForGroup(None) or [-1])


def _rounds(
    spark: SparkSession, append: Callable[[str], None], names: list[str], writers: int, rounds: int
) -> dict[str, float]:
    """Run the rounds with ``writers`` threads; the figures per round and per table."""
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    walls, cpus = [], []
    first_job = _last_job_id(spark)
    for _ in range(rounds):
        cpu_before = _cpu_seconds(os.getpid()) + _cpu_seconds(jvm_pid)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=writers) as pool:
            list(pool.map(append, names))
        walls.append(time.perf_counter() - started)
        cpus.append(_cpu_seconds(os.getpid()) + _cpu_seconds(jvm_pid) - cpu_before)
    jobs = _last_job_id(spark) - first_job
    tables = len(names)
    return {
        "round_wall_s_mean": statistics.mean(walls),
        "round_wall_s_median": statistics.median(walls),
        "round_wall_s_max": max(walls),
        "wall_s_per_table": statistics.mean(walls) / tables,
        "cpu_s_per_table": statistics.mean(cpus) / tables,
        "jobs_per_table": jobs / (rounds * tables),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--rows", type=int, default=20, help="rows per append")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--writers", type=int, nargs="+", default=[4])
    parser.add_argument("--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS))
    args = parser.parse_args()

    spark = get_or_create_session()
    names = [f"{DATABASE}.t_{number:03d}" for number in range(args.tables)]
    rows_sql = (
        f"select id, cast(id as string) as name, id * 1.5 as score, current_timestamp() as at "
        f"from range({args.rows})"
    )
    rows = spark.sql(rows_sql)

    def append(table: str) -> None:
        rows.write.format("delta").mode("append").saveAsTable(table)

    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        for setting in args.settings:
            session, table = _settings_of(setting)
            spark.sql(f"drop database if exists {DATABASE} cascade")
            spark.sql(f"create database {DATABASE}")
            properties = ", ".join(f"'{key}' = '{value}'" for key, value in table.items())
            created = f" tblproperties ({properties})" if properties else ""
            statements = [f"create table {n} using delta{created} as {rows_sql}" for n in names]
            with ThreadPoolExecutor(max_workers=4) as pool:  # the tables exist before the rounds
                list(pool.map(spark.sql, statements))
            before = {key: spark.conf.get(key, None) for key in session}
            for key, value in session.items():
                spark.conf.set(key, value)
            try:
                results[setting] = {}
                for writers in args.writers:
                    figures = _rounds(spark, append, names, writers, args.rounds)
                    results[setting][str(writers)] = figures
                    print(
                        f"{setting}, {writers} writers: a round of {args.tables} appends "
                        f"{figures['round_wall_s_mean']:.1f} s mean "
                        f"({figures['round_wall_s_median']:.1f} median, "
                        f"{figures['round_wall_s_max']:.1f} max), "
                        f"{figures['wall_s_per_table']:.3f} s and "
                        f"{figures['cpu_s_per_table']:.3f} CPU s a table, "
                        f"{figures['jobs_per_table']:.2f} jobs a table",
                        flush=True,
                    )
            finally:
                for key, value in before.items():
                    if value is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, value)
        save_results(
            f"delta_commit_floor_{args.tables}_tables",
            {
                "tables": args.tables,
                "rows_per_append": args.rows,
                "rounds": args.rounds,
                "cpus": os.cpu_count(),
                "by_setting": results,
            },
        )
    finally:
        spark.sql(f"drop database if exists {DATABASE} cascade")
    return 0


if __name__ == "__main__":
    sys.exit(main())
