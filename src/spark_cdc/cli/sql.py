"""``spark-cdc sql``: SQL statements run on the profile's target, their rows printed."""

from __future__ import annotations

import argparse
import sys

from spark_cdc.cli.sql_output import FORMATS, format_rows


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
        "--limit", type=int, default=50, help="rows printed per statement (0: every row)"
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
    for statement in args.statements:
        try:
            frame = spark.sql(statement)
            rows = (frame.limit(args.limit + 1) if args.limit > 0 else frame).collect()
        except PySparkException as error:
            print(f"spark-cdc: error: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2
        more = args.limit > 0 and len(rows) > args.limit
        shown = [tuple(row) for row in (rows[: args.limit] if more else rows)]
        print(format_rows(statement, frame.columns, shown, more, args.format))
    return 0
