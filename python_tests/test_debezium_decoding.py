"""Debezium's value encodings decoded in Spark exactly as the plain-Python model says, and the
model checked against values worked out by hand (Java's BigInteger bytes, calendar days)."""

from __future__ import annotations

import base64

import pytest

from spark_cdc.change_events.debezium.types import (
    DebeziumSettings,
    FieldSchema,
    Undecodable,
    decode,
    field_kind,
)


def b64(value: int, size: int) -> str:
    """Java's BigInteger.toByteArray of ``value`` (two's complement, big-endian) in base64."""
    return base64.b64encode(value.to_bytes(size, "big", signed=True)).decode()


DEC = FieldSchema("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2"})
VAR = FieldSchema("struct", "io.debezium.data.VariableScaleDecimal")
DATE = FieldSchema("int32", "io.debezium.time.Date")
MICRO_TS = FieldSchema("int64", "io.debezium.time.MicroTimestamp")
MILLI_TS = FieldSchema("int64", "io.debezium.time.Timestamp")
NANO_TS = FieldSchema("int64", "io.debezium.time.NanoTimestamp")
CONNECT_TS = FieldSchema("int64", "org.apache.kafka.connect.data.Timestamp")
CONNECT_DATE = FieldSchema("int32", "org.apache.kafka.connect.data.Date")
MICRO_TIME = FieldSchema("int64", "io.debezium.time.MicroTime")
MILLI_TIME = FieldSchema("int32", "io.debezium.time.Time")
NANO_TIME = FieldSchema("int64", "io.debezium.time.NanoTime")
ZONED = FieldSchema("string", "io.debezium.time.ZonedTimestamp")
ISO_DATE = FieldSchema("string", "io.debezium.time.IsoDate")
JSON = FieldSchema("string", "io.debezium.data.Json")
UUID = FieldSchema("string", "io.debezium.data.Uuid")
DEFAULTS = DebeziumSettings()
STRING_DECIMALS = DebeziumSettings(decimal_handling_mode="string")
CONNECT = DebeziumSettings(time_precision_mode="connect")
ISO = DebeziumSettings(time_precision_mode="isostring")

# (raw text, field schema, declared type, settings, expected text or None for undecodable)
CASES = [
    (b64(-1234, 2), DEC, "decimal(12,2)", DEFAULTS, "-12.34"),
    (b64(-5, 1), DEC, "decimal(12,2)", DEFAULTS, "-0.05"),
    (b64(-128, 1), DEC, "decimal(12,2)", DEFAULTS, "-1.28"),
    (b64(128, 2), DEC, "decimal(12,2)", DEFAULTS, "1.28"),  # 0x0080: the sign byte kept
    (b64(9_999_999_999, 5), DEC, "decimal(12,2)", DEFAULTS, "99999999.99"),
    (b64(0, 1), DEC, "decimal(12,2)", DEFAULTS, "0.00"),
    (b64(-(10**38), 17), DEC, "decimal(38,2)", DEFAULTS, None),  # 39 digits: no Spark decimal
    (b64(1234, 2), None, "decimal(12,2)", DEFAULTS, "12.34"),  # schemas off: declared scale
    ("-12.34", None, "decimal(12,2)", STRING_DECIMALS, "-12.34"),
    ("-12.34", None, "decimal(12,2)", DebeziumSettings(decimal_handling_mode="double"), "-12.34"),
    ("not base64!", DEC, "decimal(12,2)", DEFAULTS, None),
    ("-12.34", None, "decimal(12,2)", DEFAULTS, None),  # a string decimal in precise mode
    ('{"scale":3,"value":"' + b64(-123456, 3) + '"}', VAR, "decimal(20,3)", DEFAULTS, "-123.456"),
    ('{"scale":0,"value":"' + b64(7, 1) + '"}', None, "decimal(20,3)", DEFAULTS, "7"),
    ('{"scale":"x","value":"AQ=="}', VAR, "decimal(20,3)", DEFAULTS, None),
    ("20460", DATE, "date", DEFAULTS, "2026-01-07"),
    ("-25509", DATE, "date", DEFAULTS, "1900-02-28"),
    ("0", DATE, "date", DEFAULTS, "1970-01-01"),
    ("20460", None, "date", DEFAULTS, "2026-01-07"),
    ("20460", CONNECT_DATE, "date", CONNECT, "2026-01-07"),
    ("3000000", DATE, "date", DEFAULTS, None),  # past the year 9999
    ("2026-01-07Z", ISO_DATE, "date", ISO, "2026-01-07"),
    ("2026-01-07Z", None, "date", ISO, "2026-01-07"),
    ("20460", None, "date", ISO, None),
    ("1767780000123456", MICRO_TS, "timestamp", DEFAULTS, "2026-01-07 10:00:00.123456"),
    ("-500000", MICRO_TS, "timestamp", DEFAULTS, "1969-12-31 23:59:59.500000"),
    ("1767780000123", MILLI_TS, "timestamp", DEFAULTS, "2026-01-07 10:00:00.123000"),
    ("1767780000123456000", NANO_TS, "timestamp", DEFAULTS, "2026-01-07 10:00:00.123456"),
    ("1767780000123456789", NANO_TS, "timestamp", DEFAULTS, None),
    ("1767780000123", CONNECT_TS, "timestamp", CONNECT, "2026-01-07 10:00:00.123000"),
    ("1767780000123456", None, "timestamp", DEFAULTS, "2026-01-07 10:00:00.123456"),
    ("1767780000123", None, "timestamp", CONNECT, "2026-01-07 10:00:00.123000"),
    ("2026-01-07T10:00:00.123456Z", None, "timestamp", ISO, "2026-01-07 10:00:00.123456"),
    ("2026-01-07T12:30:00+02:30", ZONED, "timestamp", DEFAULTS, "2026-01-07 10:00:00.000000"),
    ("2026-01-07T12:30:00+02:30", ZONED, "string", DEFAULTS, "2026-01-07T12:30:00+02:30"),
    ("2026-01-07T10:00:00.1234567Z", ZONED, "timestamp", DEFAULTS, None),
    ("2026-01-07T10:00:00Z", None, "timestamp", DEFAULTS, "2026-01-07 10:00:00.000000"),
    ("yesterday", None, "timestamp", DEFAULTS, None),
    ("36000123456", MICRO_TIME, "string", DEFAULTS, "10:00:00.123456"),
    ("36000123", MILLI_TIME, "string", DEFAULTS, "10:00:00.123000"),
    ("36000123456000", NANO_TIME, "string", DEFAULTS, "10:00:00.123456"),
    ("86400000000", MICRO_TIME, "string", DEFAULTS, "24:00:00.000000"),
    ("86400000001", MICRO_TIME, "string", DEFAULTS, None),
    ('{"a": [1, 2]}', JSON, "string", DEFAULTS, '{"a": [1, 2]}'),
    (
        "b1f4c1c0-0000-4000-8000-000000000001",
        UUID,
        "string",
        DEFAULTS,
        "b1f4c1c0-0000-4000-8000-000000000001",
    ),
    ("true", None, "boolean", DEFAULTS, "true"),
    ("42", None, "bigint", DEFAULTS, "42"),
]


def _model(raw, field, spark_type, settings):
    try:
        return decode(raw, field, spark_type, settings)
    except Undecodable:
        return None


@pytest.mark.unit
@pytest.mark.parametrize("raw,field,spark_type,settings,expected", CASES)
def test_the_model_decodes_as_worked_out_by_hand(raw, field, spark_type, settings, expected):
    assert _model(raw, field, spark_type, settings) == expected


@pytest.mark.unit
def test_kinds_name_what_decides_them():
    assert field_kind(DEC, "decimal(12,2)", DEFAULTS) == (
        "decimal",
        "org.apache.kafka.connect.data.Decimal",
    )
    assert field_kind(None, "decimal(12,2)", DEFAULTS) == (
        "decimal",
        "decimal.handling.mode=precise",
    )
    assert field_kind(None, "date", ISO) == ("iso_date", "time.precision.mode=isostring")


def test_spark_decodes_every_case_as_the_model(spark):
    """Through the path normalize_debezium takes: a column_plan per (declared type, settings),
    all of a row's plans decoded by decode_column."""
    from pyspark.sql import functions as F

    from spark_cdc.change_events.debezium import decode as debezium_decode

    field_type = "struct<field: string, type: string, name: string, parameters: map<string,string>>"
    rows = [
        (
            index,
            raw,
            None
            if field is None
            else ("value", field.type, field.name, dict(field.parameters or {})),
        )
        for index, (raw, field, *_rest) in enumerate(CASES)
    ]
    frame = spark.createDataFrame(rows, f"i int, raw string, field {field_type}")
    kinds = sorted({(case[2], case[3]) for case in CASES}, key=repr)
    raw, field = F.col("raw"), F.col("field")
    plans = [
        debezium_decode.column_plan(raw, field, spark_type, settings, F.lit(False))
        for spark_type, settings in kinds
    ]
    decoded = frame.select("i", F.array(*plans).alias("plans")).select(
        "i", debezium_decode.decode_column("plans").alias("decoded")
    )
    got = {
        row["i"]: row["decoded"][kinds.index(CASES[row["i"]][2:4])]["text"]
        for row in decoded.collect()
    }
    expected = {i: _model(*case[:4]) for i, case in enumerate(CASES)}
    assert got == expected
