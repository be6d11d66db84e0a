"""The project's snapshot against stock dbt-spark: same data, same run, same session.

A generated source of ``--rows`` rows (id, 8 payload columns, updated_at) is snapshotted on day 1
(first build) and again on day 2, after 10% of the rows were updated, 5% deleted and 5% inserted.
Both projects use the timestamp strategy with ``hard_deletes: invalidate`` on a Delta table; the
stock one is a copy of this project without the three snapshot macro overrides. Both run
in-process (dbtRunner) on one Spark session, alternating which goes first on each repeat.

Reports the wall time of each ``dbt snapshot``, the ratio project / stock, rows/s and peak memory.
Usage: ``python benchmarks/bench_snapshot.py --rows 1000000``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import jvm_peak_rss_mib, peak_rss_mib, save_results

from spark_cdc.dbt_invoke import run_dbt, snapshot_variant
from spark_cdc.runtime import get_or_create_session

PROJECT = Path(__file__).resolve().parents[1]
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


def _generate(spark, rows: int) -> None:
    """Write day 1 and day 2 of the source as Delta tables bench_src.day1 / bench_src.day2."""
    spark.sql("create schema if not exists bench_src")
    spark.sql("drop table if exists bench_src.day1")
    spark.sql("drop table if exists bench_src.day2")
    spark.sql(
        f"create table bench_src.day1 using delta as select id, {PAYLOAD}, "
        f"timestamp'2026-01-01 00:00:00' as updated_at from range({rows})"
    )
    inserted = rows // 20
    spark.sql(
        f"""
        create table bench_src.day2 using delta as
        select
            id, name, email, segment_code,
            case when pmod(id, 20) in (0, 1) then balance + 1 else balance end as balance,
            age, city, active, signup_date,
            case when pmod(id, 20) in (0, 1) then timestamp'2026-01-02 00:00:00'
                else updated_at end as updated_at
        from bench_src.day1
        where pmod(id, 20) != 2
        union all
        select id, {PAYLOAD}, timestamp'2026-01-02 00:00:00' as updated_at
        from range({rows}, {rows + inserted})
        """
    )


def _use_day(spark, day: int) -> None:
    spark.sql(f"create or replace view bench_src.current as select * from bench_src.day{day}")


def _project(base: Path, name: str, stock: bool) -> Path:
    files = {"models/bench_source.yml": SOURCE_YML, "snapshots/bench.yml": SNAPSHOT_YML}
    return snapshot_variant(base / name, f"bench_{name}", files, stock, PROJECT)


def _timed_snapshot(project: Path) -> float:
    started = time.perf_counter()
    run_dbt(["snapshot", "--select", "bench_snapshot", "--quiet"], project_dir=project)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="source rows on day 1")
    parser.add_argument("--repeat", type=int, default=2, help="day-1 + day-2 cycles per variant")
    args = parser.parse_args()

    spark = get_or_create_session()
    started = time.perf_counter()
    _generate(spark, args.rows)
    print(f"generated {args.rows:,} rows + day 2 in {time.perf_counter() - started:.1f} s")

    base = Path(tempfile.mkdtemp(prefix="bench_snapshot_"))
    projects = {"project": _project(base, "project", False), "stock": _project(base, "stock", True)}
    # Parse both projects once, outside the timings.
    for project in projects.values():
        run_dbt(["parse", "--quiet"], project_dir=project)

    times: dict[str, dict[str, list[float]]] = {v: {"day1": [], "day2": []} for v in projects}
    for attempt in range(args.repeat):
        order = list(projects) if attempt % 2 == 0 else list(reversed(projects))
        for variant in order:
            spark.sql(f"drop table if exists spark_cdc_bench_{variant}.bench_snapshot")
        for day in (1, 2):
            _use_day(spark, day)
            for variant in order:
                seconds = _timed_snapshot(projects[variant])
                times[variant][f"day{day}"].append(seconds)
                print(f"repeat {attempt + 1} day {day} {variant:>7}: {seconds:6.1f} s", flush=True)

    day2_rows = spark.table("bench_src.day2").count()
    report: dict[str, object] = {"rows_day1": args.rows, "rows_day2": day2_rows, "runs": times}
    medians = {
        variant: {day: statistics.median(values) for day, values in by_day.items()}
        for variant, by_day in times.items()
    }
    report["median_s"] = medians
    for day, rows in (("day1", args.rows), ("day2", day2_rows)):
        ratio = medians["project"][day] / medians["stock"][day]
        report[f"ratio_{day}"] = ratio
        for variant in projects:
            report[f"rows_per_s_{variant}_{day}"] = rows / medians[variant][day]
        print(
            f"{day}: project {medians['project'][day]:.1f} s ({rows / medians['project'][day]:,.0f}"
            f" rows/s), stock {medians['stock'][day]:.1f} s, ratio {ratio:.2f}x"
        )
    check = spark.table("spark_cdc_bench_project.bench_snapshot")
    report["project_rows_after_day2"] = check.count()
    report["peak_jvm_rss_mib"] = jvm_peak_rss_mib(spark)
    report["peak_python_rss_mib"] = peak_rss_mib()
    print(
        f"peak memory: JVM {report['peak_jvm_rss_mib']:.0f} MiB, Python "
        f"{report['peak_python_rss_mib']:.0f} MiB"
    )
    save_results("snapshot", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
