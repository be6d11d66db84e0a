"""The main job: every capability of the project end to end on the embedded runtime.

Run with ``make run``. Each step prints what it did; dbt runs in this process on one shared
Spark session (Delta Lake + persistent metastore under ``$SPARK_CDC_HOME``). The job replays its
demo from scratch each time, so running it again gives the same tables.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from spark_cdc.dbt_invoke import last_invocation_id, node_statuses, project_root, run_dbt
from spark_cdc.runtime import get_or_create_session

SCHEMA = "spark_cdc"
EXAMPLE_SNAPSHOTS = (
    "customers_ts_ignore",
    "customers_ts_invalidate",
    "customers_ts_new_record",
    "customers_check_all",
    "customers_check_cols_renamed",
    "customers_composite_key",
)


def _step(title: str, action: Callable[[], str]) -> None:
    started = time.perf_counter()
    print(f"==> {title}", flush=True)
    summary = action()
    print(f"    {summary} ({time.perf_counter() - started:.1f} s)", flush=True)


def _dbt_summary(args: list[str]) -> str:
    statuses = node_statuses(run_dbt(args))
    return ", ".join(f"{name}={status}" for name, status in statuses) or "done"


def _snapshot_day(spark, day: int) -> str:
    """Show the example source as of ``day`` and snapshot it; summarize what each run changed."""
    day_vars = json.dumps({"source_day": day})
    run_dbt(["run", "--select", "stg_customer_states", "--vars", day_vars])
    run_dbt(["snapshot", "--select", *EXAMPLE_SNAPSHOTS, "--vars", day_vars])
    invocation = last_invocation_id()
    lines = []
    for name in EXAMPLE_SNAPSHOTS:
        table = spark.table(f"{SCHEMA}.{name}")
        inserted = table.where(f"dbt_insert_process_id = '{invocation}'").count()
        closed = table.where(f"dbt_close_process_id = '{invocation}'").count()
        lines.append(f"{name}: {table.count()} rows, +{inserted} inserted, {closed} closed")
    return f"day {day}:\n      " + "\n      ".join(lines)


def main() -> int:
    """Run the job and print a summary of every step."""
    project = project_root()
    spark = get_or_create_session()
    print(f"Spark {spark.version} | warehouse {spark.conf.get('spark.sql.warehouse.dir')}")

    def reset() -> str:
        spark.sql(f"create schema if not exists {SCHEMA}")
        for name in (*EXAMPLE_SNAPSHOTS, "customers_snapshot"):
            spark.sql(f"drop table if exists {SCHEMA}.{name}")
        return "dropped the example snapshots: the demo replays from day 1"

    _step("reset", reset)
    _step("dbt seed", lambda: _dbt_summary(["seed"]))
    for day in (1, 2, 3):
        _step(f"snapshots, source day {day}", lambda day=day: _snapshot_day(spark, day))
    _step(
        "dbt snapshot (raw customers)",
        lambda: _dbt_summary(["snapshot", "-s", "customers_snapshot"]),
    )
    _step(
        "dbt run (Python model)",
        lambda: _dbt_summary(["run", "--select", "customers_by_segment"]),
    )
    _step(
        "dbt build (day 3 again: snapshots find no change; all data tests)",
        lambda: _build_summary(["build", "--vars", json.dumps({"source_day": 3})]),
    )
    _step("dbt docs generate", lambda: _docs(project))
    rows = spark.table(f"{SCHEMA}.customers_by_segment").orderBy("segment").collect()
    for row in rows:
        print(f"    segment={row.segment} customers={row.customer_count}")
    return 0


def _build_summary(args: list[str]) -> str:
    statuses = node_statuses(run_dbt(args))
    counts: dict[str, int] = {}
    for _, status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))


def _docs(project: Path) -> str:
    run_dbt(["docs", "generate"])
    catalog = project / "target" / "catalog.json"
    return f"wrote {catalog} ({catalog.stat().st_size} bytes)"


if __name__ == "__main__":
    sys.exit(main())
