"""The project's snapshot against stock dbt-spark: same data, same run, same session.

A generated source of ``--keys`` keys (id, 8 payload columns, updated_at) is snapshotted on day 1
(first build) by both projects. Then, at two history sizes (1 version per key, and 10: nine
closed versions per key appended to the day-1 table, then compacted by OPTIMIZE as the project's
table maintenance leaves a table; ``--history-layout split`` keeps the closed versions in files
of their own instead), each project runs:

- day N: 1% of the keys updated, 0.1% deleted, 0.1% inserted;
- a zero-change day: the same source again.

The process is warm: one untimed first build and one untimed day N per project come first.

Both projects use the timestamp strategy with ``hard_deletes: invalidate`` on a Delta table; the
stock one is a copy of this project without the snapshot macro overrides. Both run in-process
(dbtRunner) on one Spark session, alternating which goes first; each repetition starts from the
same table version (Delta RESTORE). After each run the two tables must hold the same rows
(metadata columns aside).

Reports the wall time of each ``dbt snapshot`` and of its node alone (dbt's debug log; the rest
is dbt's own cost per command, the same on both sides), the ratios project / stock, rows/s,
files added and removed by the run (``describe history``), what Spark read and shuffled in the
run (jobs, records and bytes read, shuffle bytes written: the session's event log, the run's
time window; machine load does not change them) and peak memory.
Usage: ``python benchmarks/bench_snapshot.py`` (``--keys 5000000`` for the large run)
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import jvm_peak_rss_mib, machine_facts, peak_rss_mib, save_results
from _event_log import read_applications

from spark_cdc.cli.dbt_invoke import run_dbt
from spark_cdc.session.runtime import get_or_create_session
from spark_cdc_dev.project_copies import snapshot_variant

PROJECT = Path(__file__).resolve().parents[1]
VARIANTS = ("project", "stock")
SOURCE_YML = """
version: 2
sources:
  - name: bench
    schema: bench_src
    tables:
      - name: current
"""
SNAPSHOT_YML = """
snapshots:
  - name: bench_snapshot
    relation: source('bench', 'current')
    config: {unique_key: id, strategy: timestamp, updated_at: updated_at, hard_deletes: invalidate}
"""
PAYLOAD = """
    concat('customer_', id) as name,
    concat('c', id, '@example.com') as email,
    pmod(hash(id, 1), 1000) as segment_code,
    cast(pmod(hash(id, 2), 100000) as double) / 100 as balance,
    pmod(hash(id, 3), 90) + 10 as age,
    concat('city_', pmod(hash(id, 4), 500)) as city,
    pmod(hash(id, 5), 2) = 0 as active,
    date_add(date'2000-01-01', pmod(hash(id, 6), 9000)) as signup_date
"""
SOURCE_COLUMNS = (
    "id, name, email, segment_code, balance, age, city, active, signup_date, updated_at"
)
# Rows compared between the two tables: everything but the operational metadata; dbt_valid_to
# only where it is data (an update's close), not the wall-clock time of a delete.
COMPARED = (
    f"{SOURCE_COLUMNS}, dbt_scd_id, dbt_updated_at, dbt_valid_from, dbt_valid_to is null as open, "
    "case when dbt_valid_to < timestamp'2026-06-01' then dbt_valid_to end as closed_by_update"
)


def _generate(spark, keys: int) -> None:
    """Day 1 and day N of the source as Delta tables bench_src.day1 / bench_src.dayn."""
    spark.sql("create schema if not exists bench_src")
    for table in ("day1", "dayn"):
        spark.sql(f"drop table if exists bench_src.{table}")
    spark.sql(
        f"create table bench_src.day1 using delta as select id, {PAYLOAD}, "
        f"timestamp'2026-01-01 00:00:00' as updated_at from range({keys})"
    )
    updated = "pmod(id, 100) = 0"
    spark.sql(
        f"""
        create table bench_src.dayn using delta as
        select
            id, name, email, segment_code,
            case when {updated} then balance + 1 else balance end as balance,
            age, city, active, signup_date,
            case when {updated} then timestamp'2026-01-02 00:00:00'
                else updated_at end as updated_at
        from bench_src.day1
        where pmod(id, 1000) != 1
        union all
        select id, {PAYLOAD}, timestamp'2026-01-02 00:00:00' as updated_at
        from range({keys}, {keys + keys // 1000})
        """
    )


def _use_day(spark, day: str) -> None:
    spark.sql(f"create or replace view bench_src.current as select * from bench_src.{day}")


def _table(variant: str) -> str:
    return f"spark_cdc_bench_{variant}.bench_snapshot"


def _project(base: Path, name: str, stock: bool, extra_config: str = "") -> Path:
    snapshot_yml = SNAPSHOT_YML.replace(
        "hard_deletes: invalidate", "hard_deletes: invalidate" + extra_config
    )
    files = {"models/bench_source.yml": SOURCE_YML, "snapshots/bench.yml": snapshot_yml}
    return snapshot_variant(base / name, f"bench_{name}", files, stock, PROJECT)


def _add_history(spark, variant: str, versions: int) -> None:
    """Append ``versions - 1`` closed versions per key, ending before the day-1 version starts."""
    table = _table(variant)
    columns = [field.name for field in spark.table(table).schema]
    closed = {
        "balance": "balance - v",
        "updated_at": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v)",
        "dbt_updated_at": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v)",
        "dbt_valid_from": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v)",
        "dbt_valid_to": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v + 1)",
        "dbt_valid_to_high": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v + 1)",
        "dbt_scd_id": "md5(concat(cast(id as string), '|history|', cast(v as string)))",
        "dbt_insert_process_id": "'history'",
        "dbt_close_process_id": "'history'",
        "dbt_inserted_at": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v)",
        "dbt_closed_at": "timestamp'2025-01-01 00:00:00' + make_interval(0, 0, 0, v + 1)",
    }
    select = ", ".join(f"{closed.get(name, name)} as {name}" for name in columns)
    spark.sql(
        f"insert into {table} select {select} from {table} "
        f"lateral view explode(sequence(0, {versions - 2})) history as v"
    )


# The default of the snapshot config snapshot_deletion_vectors_min_mb
# (macros/snapshots/snapshot_merge.sql): smaller tables are merged without deletion vectors.
DELETION_VECTORS_MIN_MB = 32


def _upgrade_as_the_project_would(spark) -> None:
    """Deletion vectors on the project's table when its size calls for them."""
    detail = spark.sql(f"describe detail {_table('project')}").first()
    if detail["sizeInBytes"] >= DELETION_VECTORS_MIN_MB * 2**20:
        deletion_vectors = "('delta.enableDeletionVectors' = 'true')"
        spark.sql(f"alter table {_table('project')} set tblproperties {deletion_vectors}")


def _version(spark, variant: str) -> int:
    return spark.sql(f"describe history {_table(variant)} limit 1").first()["version"]


def _last_run_files(spark, variant: str, since: int) -> dict[str, int]:
    """Files added and removed, and deletion vectors written, by the commits after ``since``."""
    totals = {"files_added": 0, "files_removed": 0, "deletion_vectors_added": 0, "commits": 0}
    for row in spark.sql(f"describe history {_table(variant)}").collect():
        if row["version"] <= since:
            continue
        metrics = row["operationMetrics"] or {}
        totals["commits"] += 1
        added = metrics.get("numFiles", metrics.get("numAddedFiles", 0))
        totals["files_added"] += int(metrics.get("numTargetFilesAdded", added))
        totals["files_removed"] += int(
            metrics.get("numTargetFilesRemoved", metrics.get("numRemovedFiles", 0))
        )
        totals["deletion_vectors_added"] += int(metrics.get("numTargetDeletionVectorsAdded", 0))
    return totals


def _assert_same_rows(spark) -> int:
    """Both tables hold the same rows (metadata aside); returns the row count."""
    frames = [spark.sql(f"select {COMPARED} from {_table(variant)}") for variant in VARIANTS]
    counts = [frame.count() for frame in frames]
    missing = frames[1].exceptAll(frames[0]).count()
    extra = frames[0].exceptAll(frames[1]).count()
    if counts[0] != counts[1] or missing or extra:
        raise AssertionError(
            f"tables differ: project {counts[0]} rows, stock {counts[1]}; "
            f"{missing} stock rows missing from project, {extra} project rows not in stock"
        )
    return counts[0]


def _timed_snapshot(project: Path) -> tuple[float, float, tuple[int, int]]:
    """Wall seconds of one ``dbt snapshot``, the seconds of its node (from the debug log: the
    difference is dbt's own cost per command: start-up, partial parse, artifacts) and the run's
    window in epoch milliseconds."""
    window_start = int(time.time() * 1000)
    started = time.perf_counter()
    run_dbt(["snapshot", "--select", "bench_snapshot", "--quiet"], project_dir=project)
    wall = time.perf_counter() - started
    return (
        wall,
        _node_seconds(project / "logs" / "dbt.log"),
        (window_start, int(time.time() * 1000)),
    )


def _run_reads(log_dir: Path, window: tuple[int, int]) -> dict[str, int]:
    """What the session's Spark read and shuffled in ``window`` (this process's application)."""
    (application,) = read_applications(log_dir, in_progress=True).values()
    return application.total(*window).as_dict()


def _node_seconds(log: Path) -> float:
    """Seconds between the last 'Began running node' and 'Finished running node' lines of a dbt
    debug log (run_results.json times only the compile step of a snapshot)."""
    stamps: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        for event in ("Began running node", "Finished running node"):
            if event in line:
                found = re.search(r"(\d\d):(\d\d):(\d\d\.\d+)", line)
                if found:
                    hours, minutes, seconds = found.groups()
                    stamps[event] = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    return (stamps["Finished running node"] - stamps["Began running node"]) % 86400


def _medians(runs: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """The median seconds of each run of each variant."""
    return {
        variant: {run: statistics.median(times) for run, times in by_run.items() if times}
        for variant, by_run in runs.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=500_000, help="source keys on day 1")
    parser.add_argument("--repeat", type=int, default=2, help="repetitions of each run")
    parser.add_argument(
        "--versions", type=int, nargs="+", default=[1, 10], help="history sizes (versions per key)"
    )
    parser.add_argument(
        "--history-layout",
        choices=("maintained", "split"),
        default="maintained",
        help="the added history's files: compacted by OPTIMIZE as the project's table maintenance "
        "leaves them (default), or the closed versions in files of their own",
    )
    parser.add_argument(
        "--no-digest",
        action="store_true",
        help="the project's snapshot with snapshot_compare_digests: false (every run joins)",
    )
    args = parser.parse_args()

    # dbt runs in this process, on the session this script starts: by default the project's
    # profile and its embedded target (the by-hand default, the engine, would need this home).
    os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT / "profiles"))
    os.environ.setdefault("SPARK_CDC_TARGET", "local")
    base = Path(tempfile.mkdtemp(prefix="bench_snapshot_"))
    log_dir = base / "event_logs"
    log_dir.mkdir()
    spark = get_or_create_session(
        extra={
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": log_dir.as_uri(),
            "spark.eventLog.compress": "false",
        }
    )
    started = time.perf_counter()
    _generate(spark, args.keys)
    print(f"generated {args.keys:,} keys + day N in {time.perf_counter() - started:.1f} s")

    no_digest = ", snapshot_compare_digests: false" if args.no_digest else ""
    projects = {
        name: _project(base, name, name == "stock", "" if name == "stock" else no_digest)
        for name in VARIANTS
    }
    for project in projects.values():  # parse once, outside the timings
        run_dbt(["parse", "--quiet"], project_dir=project)

    def order(attempt: int) -> list[str]:
        return list(VARIANTS) if attempt % 2 == 0 else list(reversed(VARIANTS))

    runs: dict[str, dict[str, list[float]]] = {variant: {} for variant in VARIANTS}
    node_runs: dict[str, dict[str, list[float]]] = {variant: {} for variant in VARIANTS}
    files: dict[str, dict[str, dict[str, int]]] = {variant: {} for variant in VARIANTS}
    reads: dict[str, dict[str, dict[str, int]]] = {variant: {} for variant in VARIANTS}
    rows: dict[str, int] = {}

    def record(
        run: str, variant: str, timing: tuple[float, float, tuple[int, int]], since: int
    ) -> None:
        runs[variant].setdefault(run, []).append(timing[0])
        node_runs[variant].setdefault(run, []).append(timing[1])
        files[variant][run] = _last_run_files(spark, variant, since)
        reads[variant][run] = _run_reads(log_dir, timing[2])  # the same in every repetition
        print(
            f"{run:>14} {variant:>7}: {timing[0]:6.1f} s (node {timing[1]:5.1f} s)  "
            f"{files[variant][run]} {reads[variant][run]}",
            flush=True,
        )

    _use_day(spark, "day1")
    for variant in VARIANTS:  # one untimed first build each: the JVM's warm-up is nobody's cost
        spark.sql(f"drop table if exists {_table(variant)}")
        _timed_snapshot(projects[variant])
    for attempt in range(args.repeat):
        for variant in order(attempt):
            spark.sql(f"drop table if exists {_table(variant)}")
            record("day1", variant, _timed_snapshot(projects[variant]), -1)
    rows["day1"] = _assert_same_rows(spark)

    for versions in args.versions:
        if versions > 1:
            for variant in VARIANTS:
                _add_history(spark, variant, versions)
                if args.history_layout == "maintained":
                    spark.sql(f"optimize {_table(variant)}")
        # The project's first merging run on a table of DELETION_VECTORS_MIN_MB or more turns on
        # deletion vectors (a one-time table upgrade): done here, untimed, so that every
        # repetition restores to a version after it, as the project's daily runs leave the table.
        _upgrade_as_the_project_would(spark)
        start = {variant: _version(spark, variant) for variant in VARIANTS}
        rows[f"history_{versions}"] = _assert_same_rows(spark)
        if versions == args.versions[0]:
            # One untimed day N each: the JVM compiles the MERGE's code once per process, and
            # the variant that ran first would pay it alone.
            _use_day(spark, "dayn")
            for variant in VARIANTS:
                _timed_snapshot(projects[variant])
                spark.sql(f"restore table {_table(variant)} to version as of {start[variant]}")
            _use_day(spark, "day1")
        for attempt in range(args.repeat):
            for variant in VARIANTS:
                spark.sql(f"restore table {_table(variant)} to version as of {start[variant]}")
            _use_day(spark, "dayn")
            for run in (f"day_n_{versions}v", f"zero_change_{versions}v"):
                for variant in order(attempt):
                    since = _version(spark, variant)
                    record(run, variant, _timed_snapshot(projects[variant]), since)
                rows[run] = _assert_same_rows(spark)
            _use_day(spark, "day1")
        for variant in VARIANTS:
            spark.sql(f"restore table {_table(variant)} to version as of {start[variant]}")

    source_rows = {"day1": args.keys, "dayn": spark.table("bench_src.dayn").count()}
    medians = _medians(runs)
    node_medians = _medians(node_runs)
    report: dict[str, object] = {
        "machine": machine_facts(),
        "keys": args.keys,
        "source_rows": source_rows,
        "table_rows": rows,
        "runs_s": runs,
        "median_s": medians,
        "node_runs_s": node_runs,
        "node_median_s": node_medians,
        "files": files,
        "reads": reads,
        "history_layout": args.history_layout,
        "project_compares_digests": not args.no_digest,
    }
    for run in medians["project"]:
        ratio = medians["project"][run] / medians["stock"][run]
        source = source_rows["day1" if run == "day1" else "dayn"]
        report[f"ratio_{run}"] = ratio
        node_ratio = node_medians["project"][run] / node_medians["stock"][run]
        report[f"node_ratio_{run}"] = node_ratio
        project_reads, stock_reads = reads["project"][run], reads["stock"][run]
        print(
            f"{run:>14}: records read project {project_reads['records_read']:,} stock "
            f"{stock_reads['records_read']:,}; bytes {project_reads['bytes_read']:,} / "
            f"{stock_reads['bytes_read']:,}; shuffle {project_reads['shuffle_bytes_written']:,} / "
            f"{stock_reads['shuffle_bytes_written']:,}; jobs {project_reads['jobs']} / "
            f"{stock_reads['jobs']}"
        )
        report[f"rows_per_s_project_{run}"] = source / medians["project"][run]
        print(
            f"{run:>14}: project {medians['project'][run]:5.1f} s "
            f"({source / medians['project'][run]:,.0f} source rows/s), "
            f"stock {medians['stock'][run]:5.1f} s, ratio {ratio:.2f}x; node only: project "
            f"{node_medians['project'][run]:5.1f} s, stock {node_medians['stock'][run]:5.1f} s, "
            f"ratio {node_ratio:.2f}x"
        )
    if len(args.versions) > 1:
        first, last = args.versions[0], args.versions[-1]
        growth = medians["project"][f"day_n_{last}v"] / medians["project"][f"day_n_{first}v"]
        report["project_day_n_history_growth"] = growth
        print(f"project day N at {last} vs {first} versions per key: {growth:.2f}x")
    report["peak_jvm_rss_mib"] = jvm_peak_rss_mib(spark)
    report["peak_python_rss_mib"] = peak_rss_mib()
    print(
        f"peak memory: JVM {report['peak_jvm_rss_mib']:.0f} MiB, Python "
        f"{report['peak_python_rss_mib']:.0f} MiB"
    )
    name = "snapshot" if args.keys == 500_000 else f"snapshot_{args.keys}_keys"
    save_results(name + ("_no_digest" if args.no_digest else ""), report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
