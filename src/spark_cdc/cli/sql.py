"""``spark-cdc sql``: SQL statements run on the profile's target, their rows printed."""

from __future__ import annotations

import argparse
import sys

from spark_cdc.cli.sql_output import FORMATS, format_rows, row_limit


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
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="rows printed per statement (0: every row; default 50 for the table, every row "
        "for json and csv)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (values cut at 60 characters), json (one line per statement: its columns, "
        "rows as objects, whether rows were left out) or csv (a header, then the rows)",
    )
    parser.set_defaults(handler=_run_sql)


def _run_sql(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    from spark_cdc.targets import session_for

    spark = session_for()
    limit = row_limit(args.limit, args.format)
    for statement in args.statements:
        try:
            frame = spark.sql(statement)
            rows = (frame.limit(limit + 1) if limit > 0 else frame).collect()
        except PySparkException as error:
            print(f"spark-cdc: error: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2
        more = limit > 0 and len(rows) > limit
        shown = [tuple(row) for row in (rows[:limit] if more else rows)]
        print(format_rows(statement, frame.columns, shown, more, args.format))
        if more and args.format == "csv":  # csv has no place to say so
            print(f"spark-cdc: the first {limit} rows of: {statement}", file=sys.stderr)
    return 0
