"""What tables hold, to compare them before and after a run: Delta versions and row digests."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import functions as F


def latest_version(spark, table: str) -> int | None:
    """The table's latest Delta version (None when it does not exist)."""
    if not spark.catalog.tableExists(table):
        return None
    return spark.sql(f"describe history {table} limit 1").first().version


def versions(spark, tables: Iterable[str]) -> dict[str, int | None]:
    """Latest Delta version of each table."""
    return {table: latest_version(spark, table) for table in tables}


def digest(spark, table: str, exclude: Iterable[str] = ()) -> tuple[int, str]:
    """(row count, hash of the sorted rows) of a table without the ``exclude`` columns (run
    metadata such as process ids): equal digests mean equal contents."""
    frame = spark.table(table)
    kept = [c for c in frame.columns if c not in set(exclude)]
    hashes = frame.select(
        F.sha2(F.to_json(F.struct(*[F.col(f"`{c}`") for c in kept])), 256).alias("h")
    )
    row = hashes.agg(
        F.count(F.lit(1)).alias("n"),
        F.sha2(F.concat_ws(",", F.sort_array(F.collect_list("h"))), 256).alias("all"),
    ).first()
    return row.n, row.all
