"""What tables hold, to compare them before and after a run: Delta versions and row digests.

Used by the tests and by scripts/kill_and_rerun.py (``python -m spark_cdc.table_state TABLE...``
prints the digests of the current SPARK_CDC_HOME's tables as JSON)."""

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


def main(argv: list[str] | None = None) -> int:
    """Print {table: [version, rows, hash]} for the tables named on the command line (a name
    ending in ``*`` stands for every table of its schema that starts with it); the option
    ``--exclude a,b`` leaves those columns out of every digest."""
    import argparse
    import json

    from spark_cdc.targets import session_for

    parser = argparse.ArgumentParser(prog="python -m spark_cdc.table_state")
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--exclude", default="")
    args = parser.parse_args(argv)
    spark = session_for()
    exclude = [c for c in args.exclude.split(",") if c]
    names = []
    for name in args.tables:
        if not name.endswith("*"):
            names.append(name)
            continue
        schema, _, prefix = name[:-1].rpartition(".")
        names += sorted(
            f"{schema}.{t.name}"
            for t in spark.catalog.listTables(schema)
            if t.name.startswith(prefix)
        )
    out = {}
    for table in names:
        if not spark.catalog.tableExists(table):
            out[table] = None
            continue
        out[table] = [latest_version(spark, table), *digest(spark, table, exclude)]
    print("DIGESTS=" + json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
