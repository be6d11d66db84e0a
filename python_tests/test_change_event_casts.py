"""Accepted spellings of image values: the plain-Python model (change_events.casts) against
Spark's try_cast, on a corpus of edge spellings and on generated texts; timestamps and dates
(cast by Spark alone) against expected values written out here."""

from __future__ import annotations

import math
import random
from datetime import date, datetime
from decimal import Decimal

import pytest
from pyspark.sql import functions as F

from spark_cdc.change_events.casts import modelled, try_cast
from spark_cdc.change_events.model import ChangeEvent, TargetSchema, validate
from spark_cdc.change_events.normalize import REASON, normalize_events

TYPES = ("tinyint", "smallint", "int", "bigint", "double", "float", "boolean", "decimal(10,2)")
CORPUS = [
    *("5", "+5", "-5", " 5 ", "\t5\n", "\x005\x1f", "\x7f5\x7f", "\xa05", "05", "-0", "+", "-", ""),
    *("1.5", "1.0", "5.", ".5", "+.5", "1e3", "1E3", "1e-3", "1.5e1", "1e", "e3", ".", "1_000"),
    *("0x10", "0x1p3", "1,5", "1.5d", "1.5F", "1.0b", "abc", "\u0665", "\uff11", "1e400"),
    *("127", "128", "32767", "32768", "2147483647", "2147483648", "-2147483648"),
    *("9223372036854775807", "9223372036854775808", "00000000000000000000001"),
    *("NaN", "nan", "NAN", "+NaN", "-nan", "-NaN", "Infinity", "-Infinity", "+Infinity"),
    *("inf", "+inf", "-INF", "Inf", "infinity", "infinit", "NaNd"),
    *("1.005", "-1.005", "1.004999", "99999999.995", "99999999.994", "12345678901.5"),
    *("true", "TRUE", "tRuE", " yes ", "\tno", "false", "yes", "no", "y", "n", "t", "f"),
    *("1", "0", "2", "on", "off", "yes!"),
]


def _spark_casts(spark, texts: list[str]) -> list[dict]:
    frame = spark.createDataFrame([(t,) for t in texts], "t string")
    return [
        row.asDict()
        for row in frame.select(
            "t", *(F.col("t").try_cast(kind).alias(kind) for kind in TYPES)
        ).collect()
    ]


def _same(model: object, spark_value: object) -> bool:
    if isinstance(model, float) and isinstance(spark_value, float):
        return (math.isnan(model) and math.isnan(spark_value)) or model == spark_value
    if isinstance(model, Decimal):
        return isinstance(spark_value, Decimal) and model == spark_value
    return type(model) is type(spark_value) and model == spark_value


def _mismatches(spark, texts: list[str]) -> list[tuple]:
    found = []
    for row in _spark_casts(spark, texts):
        for kind in TYPES:
            try:
                model = try_cast(row["t"], kind)
            except ValueError:
                model = None
            if (model is None) != (row[kind] is None) or (
                model is not None and not _same(model, row[kind])
            ):
                found.append((row["t"], kind, model, row[kind]))
    return found


def test_the_model_accepts_and_refuses_the_corpus_as_spark_does(spark):
    assert _mismatches(spark, CORPUS) == []


def test_the_model_agrees_with_spark_on_generated_texts(spark):
    # Texts drawn from the characters that matter to the parsers (seeded: the same every run).
    alphabet = "0123456789+-.eExXpPdDfF _\t\x00\x7f\xa0\u0665naNIifytrueslo"
    draw = random.Random(20261124)
    texts = ["".join(draw.choices(alphabet, k=draw.randint(0, 6))) for _ in range(3000)]
    assert _mismatches(spark, texts) == []


def test_examples_of_the_documented_spellings():
    # Written out from the rules in docs/change-events.md, not from Spark.
    assert try_cast(" +5\n", "int") == 5
    assert try_cast("0x1p3", "double") == 8.0
    assert try_cast("1.5d", "double") == 1.5
    assert try_cast("1.005", "decimal(10,2)") == Decimal("1.01")
    assert try_cast("-1.005", "decimal(10,2)") == Decimal("-1.01")
    assert try_cast("Yes", "boolean") is True
    assert try_cast("0", "boolean") is False
    assert math.isinf(try_cast("-inf", "float"))
    for text, kind in [("1.5", "int"), ("1_000", "int"), ("128", "tinyint"), ("on", "boolean")]:
        with pytest.raises(ValueError):
            try_cast(text, kind)
    with pytest.raises(ValueError):
        try_cast("123456789.5", "decimal(10,2)")
    assert not modelled("timestamp") and modelled("decimal(10,2)") and modelled("bigint")


TIMESTAMPS = {
    "2026-01-01T08:00:00": datetime(2026, 1, 1, 8),
    "2026-01-01 08:00:00": datetime(2026, 1, 1, 8),
    "2026-01-01T08:00:00Z": datetime(2026, 1, 1, 8),
    "2026-01-01 08:00:00+02:00": datetime(2026, 1, 1, 6),
    "2026-01-01 08:00:00.123456789": datetime(2026, 1, 1, 8, 0, 0, 123456),
    "2026-01-01": datetime(2026, 1, 1),
    "2026-1-1": datetime(2026, 1, 1),
    "2026-01-01 8:00": datetime(2026, 1, 1, 8),
    "01/01/2026": None,
    "2026-13-01": None,
    "": None,
}


def test_timestamp_and_date_spellings_in_an_image(spark):
    schema = TargetSchema({"id": "int", "at": "timestamp", "on": "date"}, ("id",))
    events = [
        (
            "insert",
            datetime(2026, 2, 1),
            number,
            ["id", "at", "on"],
            [str(number), text, text],
        )
        for number, text in enumerate(TIMESTAMPS)
    ]
    feed = spark.createDataFrame(
        events,
        "change_type string, event_ts timestamp, event_seq bigint,"
        " column_names array<string>, column_values array<string>",
    )
    rows = {r.event_seq: r for r in normalize_events(feed, schema).collect()}
    for number, (text, expected) in enumerate(TIMESTAMPS.items()):
        row = rows[number]
        assert row.image["at"] == expected, text
        assert row.image["on"] == (None if expected is None else expected.date()), text
        assert row[REASON] == (None if expected is not None else "cast_failed:at"), text
    assert rows[0].image["on"] == date(2026, 1, 1)


def test_the_reference_refuses_to_model_a_timestamp_column():
    schema = TargetSchema({"id": "int", "at": "timestamp"}, ("id",))
    event = ChangeEvent("insert", datetime(2026, 1, 1), 0, ("id", "at"), ("1", "2026-01-01"))
    with pytest.raises(NotImplementedError):
        validate(event, schema)
