"""Warm a freshly started Connect engine before it is handed to clients.

A JVM runs the first queries of each kind interpreted: a new engine ran a dbt command about twice
as slowly as the same engine a minute later. The supervisor runs this, as a Connect client of its
own, before it writes the state file that clients look for: rounds of what dbt commands do (a
table written by a Python model and by SQL, a read right after it, a MERGE, an aggregate, a
window, the relation listing dbt caches, metadata queries) in a scratch schema
``spark_cdc_engine_warmup_<pid>`` whose files are under ``<home>/engine/``, dropped afterwards.
The engine is usable whether or not this succeeds.

Run as ``python -m spark_cdc.engine.warmup <folder> <port>`` with the token in
``SPARK_CONNECT_AUTHENTICATE_TOKEN``; ``SPARK_CDC_ENGINE_WARMUP`` sets the rounds (0: none).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROUNDS = 2
SETTING = "SPARK_CDC_ENGINE_WARMUP"
SCHEMA_PREFIX = "spark_cdc_engine_warmup_"


def warmup_rounds(environ: Mapping[str, str] | None = None) -> int:
    """The rounds ``SPARK_CDC_ENGINE_WARMUP`` asks for (default ROUNDS; 0: no warm-up); a clear
    error for anything but a whole number from 0 up."""
    raw = (os.environ if environ is None else environ).get(SETTING, "").strip()
    if not raw:
        return ROUNDS
    if not raw.isdigit():
        raise ValueError(
            f"{SETTING}={raw!r}: the engine's warm-up rounds must be a whole number from 0 up "
            f"(0 skips the warm-up; default {ROUNDS})"
        )
    return int(raw)


def scratch_schema() -> str:
    """The warm-up's schema (one per warm-up process)."""
    return f"{SCHEMA_PREFIX}{os.getpid()}"


def drop_leftovers(spark: Any) -> list[str]:
    """Drop the scratch schemas of earlier warm-ups that were killed before their clean-up (one
    engine, so one warm-up, per home at a time); their names."""
    rows = spark.sql(f"show databases like '{SCHEMA_PREFIX}*'").collect()
    names = [row[0] for row in rows]
    for name in names:
        spark.sql(f"drop schema if exists {name} cascade")
    return names


def workload(spark: Any, schema: str) -> None:
    """One round of the statements dbt commands run, on tables of ``schema``."""
    table, built = f"{schema}.events", f"{schema}.built"
    rows = spark.range(2000).selectExpr(
        "id", "id % 7 as bucket", "cast(id as string) as name", "localtimestamp() as seen_at"
    )
    rows.write.format("delta").mode("overwrite").option("overwriteSchema", "true").saveAsTable(
        table
    )
    spark.sql(
        f"create or replace table {built} using delta as "
        f"select bucket, count(*) as n, max(seen_at) as last_seen from {table} group by bucket"
    )
    spark.sql(f"select count(*) from {built} where bucket is null").collect()
    spark.sql(
        f"merge into {table} as t using (select id, id % 5 as bucket, 'changed' as name, "
        "localtimestamp() as seen_at from range(0, 3000, 3)) as s on t.id = s.id "
        "when matched and t.bucket <> s.bucket then update set * "
        "when not matched then insert * "
        "when not matched by source and t.id % 11 = 0 then delete"
    ).collect()
    spark.sql(
        "select bucket, name, row_number() over (partition by bucket order by id desc) as n "
        f"from {table} qualify n = 1"
    ).collect()
    spark.sql(f"show table extended in {schema} like '*'").collect()
    spark.sql(f"describe table extended {table}").collect()
    spark.sql(f"describe history {table}").collect()
    spark.sql("show databases").collect()


def warm_up(url: str, folder: Path, rounds: int = ROUNDS) -> float:
    """Run ``rounds`` rounds on the engine at ``url``; returns the seconds it took."""
    from pyspark.sql import SparkSession

    began = time.monotonic()
    schema, location = scratch_schema(), folder / "warmup"
    spark = SparkSession.builder.remote(url).create()
    try:
        drop_leftovers(spark)
        shutil.rmtree(location, ignore_errors=True)
        quoted = str(location).replace("\\", "\\\\").replace("'", "\\'")
        spark.sql(f"create schema if not exists {schema} location '{quoted}'")
        for _ in range(rounds):
            workload(spark, schema)
    finally:
        try:
            spark.sql(f"drop schema if exists {schema} cascade")
        finally:
            spark.stop()
            shutil.rmtree(location, ignore_errors=True)
    return time.monotonic() - began


def main(argv: list[str]) -> int:
    folder, port = Path(argv[0]), int(argv[1])
    token = os.environ.get("SPARK_CONNECT_AUTHENTICATE_TOKEN", "")
    url = f"sc://localhost:{port}/" + (f";token={token}" if token else "")
    rounds = warmup_rounds()
    seconds = warm_up(url, folder, rounds)
    plural = "" if rounds == 1 else "s"
    print(f"spark_cdc engine warm-up: {rounds} round{plural} in {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
