"""What tables hold, to compare them before and after a run: Delta versions and row digests.

Used by the tests and by scripts/kill_and_rerun.py (``python -m spark_cdc_dev.table_state TABLE...``
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


def digest(
    spark,
    table: str,
    exclude: Iterable[str] = (),
    run_times: Iterable[str] = (),
    run_since: str | None = None,
) -> tuple[int, str]:
    """(row count, hash of the sorted rows) of a table without the ``exclude`` columns (run
    metadata such as process ids): equal digests mean equal contents. In the ``run_times``
    columns (validity windows), a time at or after ``run_since`` is the run's own clock and is
    compared as a marker; earlier times (from the data, or from earlier runs) exactly."""
    frame = spark.table(table)
    kept = [c for c in frame.columns if c not in set(exclude)]
    clocked = set(run_times) if run_since else set()

    def value(name: str):
        column = F.col(f"`{name}`")
        if name not in clocked:
            return column
        # The well-known high end date (year 9999) is data, not the run's clock.
        is_run = (column >= F.to_timestamp(F.lit(run_since))) & (F.year(column) < 9000)
        return F.when(is_run, F.lit("<this run>")).otherwise(column.cast("string")).alias(name)

    hashes = frame.select(F.sha2(F.to_json(F.struct(*[value(c) for c in kept])), 256).alias("h"))
    row = hashes.agg(
        F.count(F.lit(1)).alias("n"),
        F.sha2(F.concat_ws(",", F.sort_array(F.collect_list("h"))), 256).alias("all"),
    ).first()
    return row.n, row.all


def main(argv: list[str] | None = None) -> int:
    """Print {table: [version, rows, hash]} for the tables named on the command line (a name
    ending in ``*`` stands for every table of its schema that starts with it); the option
    ``--exclude a,b`` leaves those columns out of every digest; ``--run-times a,b
    --run-since TS`` compares those columns with times from TS on as one marker."""
    import argparse
    import json

    from spark_cdc.targets import session_for

    parser = argparse.ArgumentParser(prog="python -m spark_cdc_dev.table_state")
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--exclude", default="")
    parser.add_argument("--run-times", default="")
    parser.add_argument("--run-since", default=None)
    args = parser.parse_args(argv)
    run_times = [c for c in args.run_times.split(",") if c]
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
        out[table] = [
            latest_version(spark, table),
            *digest(spark, table, exclude, run_times, args.run_since),
        ]
    print("DIGESTS=" + json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
