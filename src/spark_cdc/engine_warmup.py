"""Warm a freshly started Connect engine before it is handed to clients.

A JVM runs the first queries of each kind interpreted: a new engine ran a dbt command about twice
as slowly as the same engine a minute later. The supervisor runs this, as a Connect client of its
own, before it writes the state file that clients look for: a few rounds of what dbt commands do
(a Delta write, a read right after it, a MERGE, an aggregate, a window, metadata queries) on a
scratch Delta table under ``<home>/engine`` that is removed afterwards. The metastore is only
read. The engine is usable whether or not this succeeds.

Run as ``python -m spark_cdc.engine_warmup <folder> <port>`` with the token in
``SPARK_CONNECT_AUTHENTICATE_TOKEN``; ``SPARK_CDC_ENGINE_WARMUP`` sets the rounds (0: none).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROUNDS = 2


def workload(spark: Any, table: Path) -> None:
    """One round of the statements a dbt command runs, on the scratch table ``table``."""
    location = f"delta.`{table}`"
    rows = spark.range(2000).selectExpr(
        "id", "id % 7 as bucket", "cast(id as string) as name", "localtimestamp() as seen_at"
    )
    rows.write.format("delta").mode("overwrite").save(str(table))
    spark.read.format("delta").load(str(table)).groupBy("bucket").count().collect()
    spark.sql(
        f"merge into {location} as t using (select id, id % 5 as bucket, 'changed' as name, "
        "localtimestamp() as seen_at from range(0, 3000, 3)) as s on t.id = s.id "
        "when matched and t.bucket <> s.bucket then update set * "
        "when not matched then insert * "
        "when not matched by source and t.id % 11 = 0 then delete"
    ).collect()
    spark.sql(
        "select bucket, name, row_number() over (partition by bucket order by id desc) as n "
        f"from {location} qualify n = 1"
    ).collect()
    spark.sql(f"describe history {location}").collect()
    spark.sql("show databases").collect()
    spark.sql("show tables").collect()


def warm_up(url: str, folder: Path, rounds: int = ROUNDS) -> float:
    """Run ``rounds`` rounds on the engine at ``url``; returns the seconds it took."""
    from pyspark.sql import SparkSession

    began = time.monotonic()
    table = folder / "warmup_table"
    spark = SparkSession.builder.remote(url).create()
    try:
        for _ in range(rounds):
            workload(spark, table)
    finally:
        spark.stop()
        shutil.rmtree(table, ignore_errors=True)
    return time.monotonic() - began


def main(argv: list[str]) -> int:
    folder, port = Path(argv[0]), int(argv[1])
    token = os.environ.get("SPARK_CONNECT_AUTHENTICATE_TOKEN", "")
    url = f"sc://localhost:{port}/" + (f";token={token}" if token else "")
    rounds = int(os.environ.get("SPARK_CDC_ENGINE_WARMUP") or ROUNDS)
    seconds = warm_up(url, folder, rounds)
    plural = "" if rounds == 1 else "s"
    print(f"spark_cdc engine warm-up: {rounds} round{plural} in {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
