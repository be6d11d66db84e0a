"""`spark-cdc sql --format`: full values a script can read back, and the table for people."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

import pytest
from pyspark.sql import Row

from spark_cdc.cli.main import build_parser
from spark_cdc.cli.sql_output import format_rows, row_limit

pytestmark = pytest.mark.unit

LONG = "x" * 100
COLUMNS = ["id", "balance", "at", "note", "tags", "address"]
ROWS = [
    (1, Decimal("-12.30"), dt.datetime(2026, 1, 2, 3, 4, 5, 600000), LONG, ["a", "b"],
     Row(city="Oslo", zip=None)),
    (2, None, None, 'say "hi", then\nleave', [], None),
]  # fmt: skip


def test_json_keeps_every_value_whole_and_exact():
    document = json.loads(format_rows("select ...", COLUMNS, ROWS, False, "json"))
    assert document["columns"] == COLUMNS
    assert document["truncated"] is False
    assert document["rows"] == [
        {
            "id": 1,
            "balance": "-12.30",
            "at": "2026-01-02T03:04:05.600000",
            "note": LONG,
            "tags": ["a", "b"],
            "address": {"city": "Oslo", "zip": None},
        },
        {"id": 2, "balance": None, "at": None, "note": 'say "hi", then\nleave', "tags": [],
         "address": None},
    ]  # fmt: skip


def test_csv_reads_back_with_a_csv_reader():
    text = format_rows("select ...", COLUMNS, ROWS, False, "csv")
    header, first, second = list(csv.reader(io.StringIO(text)))
    assert header == COLUMNS
    assert first == ["1", "-12.30", "2026-01-02T03:04:05.600000", LONG, '["a", "b"]',
                     '{"city": "Oslo", "zip": null}']  # fmt: skip
    assert second == ["2", "", "", 'say "hi", then\nleave', "[]", ""]


def test_the_table_cuts_long_values_and_says_when_rows_were_left_out():
    lines = format_rows("select ...", ["id", "note"], [(1, LONG)], True, "table").splitlines()
    assert lines[2] == "1  | " + "x" * 57 + "..."
    assert lines[-1] == "(first 1 rows)"
    assert json.loads(format_rows("s", ["id"], [(1,)], True, "json"))["truncated"] is True


def test_json_is_valid_and_keeps_repeated_column_names_apart():
    text = format_rows(
        "select a.id, b.id, x", ["id", "id", "x"], [(1, 2, float("nan")), (3, 4, float("-inf"))],
        False, "json",
    )  # fmt: skip
    document = json.loads(text, parse_constant=lambda word: pytest.fail(f"invalid JSON {word}"))
    assert document["columns"] == ["id", "id#2", "x"]
    assert document["rows"] == [
        {"id": 1, "id#2": 2, "x": "NaN"},
        {"id": 3, "id#2": 4, "x": "-Infinity"},
    ]


@pytest.mark.parametrize(
    ("options", "limit"),
    [([], 50), (["--format", "csv"], 0), (["--format", "json"], 0),
     (["--format", "csv", "--limit", "5"], 5), (["--limit", "0"], 0)],
)  # fmt: skip
def test_machine_formats_print_every_row_unless_a_limit_is_given(options, limit):
    args = build_parser().parse_args(["sql", "select 1", *options])
    assert row_limit(args.limit, args.format) == limit
