"""``spark-cdc sql``: SQL statements run on the profile's target, their rows printed."""

from __future__ import annotations

import argparse
import sys

from spark_cdc.cli.options import text_table


def add_sql_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "sql",
        help="run SQL statements on the project's engine and print what they return",
        description=(
            "Run each STATEMENT (e.g. describe history <table>; restore table <table> to "
            "version as of N; select ... version as of N) and print up to --limit rows of each."
        ),
    )
    parser.add_argument("statements", nargs="+", metavar="STATEMENT")
    parser.add_argument("--limit", type=int, default=50, help="rows printed per statement")
    parser.set_defaults(handler=_run_sql)


def _run_sql(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    from spark_cdc.targets import session_for

    spark = session_for()
    for statement in args.statements:
        try:
            frame = spark.sql(statement)
            rows = frame.limit(args.limit + 1).collect()
        except PySparkException as error:
            print(f"spark-cdc: error: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2
        print(text_table(frame.columns, [tuple(row) for row in rows[: args.limit]]))
        if len(rows) > args.limit:
            print(f"(first {args.limit} rows)")
    return 0
