"""The main job: every capability of the project end to end on the embedded runtime.

Run with ``make run``. Each step prints what it did; dbt runs in this process on one shared
Spark session (Delta Lake + persistent metastore under ``$SPARK_CDC_HOME``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from spark_cdc.dbt_invoke import node_statuses, project_root, run_dbt
from spark_cdc.runtime import get_or_create_session


def _step(title: str, action: Callable[[], str]) -> None:
    started = time.perf_counter()
    print(f"==> {title}", flush=True)
    summary = action()
    print(f"    {summary} ({time.perf_counter() - started:.1f} s)", flush=True)


def _dbt_summary(args: list[str]) -> str:
    statuses = node_statuses(run_dbt(args))
    return ", ".join(f"{name}={status}" for name, status in statuses) or "done"


def main() -> int:
    """Run the job and print a summary of every step."""
    project = project_root()
    spark = get_or_create_session()
    print(f"Spark {spark.version} | warehouse {spark.conf.get('spark.sql.warehouse.dir')}")

    _step("dbt seed", lambda: _dbt_summary(["seed"]))
    _step("dbt snapshot", lambda: _dbt_summary(["snapshot"]))
    _step(
        "dbt run (Python model)", lambda: _dbt_summary(["run", "--select", "customers_by_segment"])
    )
    _step("dbt build", lambda: _dbt_summary(["build"]))
    _step("dbt docs generate", lambda: _docs(project))
    rows = spark.table("spark_cdc.customers_by_segment").orderBy("segment").collect()
    for row in rows:
        print(f"    segment={row.segment} customers={row.customer_count}")
    return 0


def _docs(project: Path) -> str:
    run_dbt(["docs", "generate"])
    catalog = project / "target" / "catalog.json"
    return f"wrote {catalog} ({catalog.stat().st_size} bytes)"


if __name__ == "__main__":
    sys.exit(main())
