"""Debezium's value encodings decoded in Spark exactly as the plain-Python model says, and the
model checked against values worked out by hand (Java's BigInteger bytes, calendar days)."""

from __future__ import annotations

import base64
import json
import string
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_cdc.change_events.debezium.types import (
    DebeziumSettings,
    FieldSchema,
    Undecodable,
    array_name,
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
BYTES = FieldSchema("bytes")
DURATION = FieldSchema("int64", "io.debezium.time.MicroDuration")
STAMPS = FieldSchema("array", "array of io.debezium.time.MicroTimestamp")
STRING = FieldSchema("string")
DEC3 = FieldSchema("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "3"})
BITS4 = FieldSchema("bytes", "io.debezium.data.Bits", {"length": "4"})
BITS12 = FieldSchema("bytes", "io.debezium.data.Bits", {"length": "12"})
DEFAULTS = DebeziumSettings()
MICROS_NAMED = DebeziumSettings.from_mapping(
    {"column.logical.types": {"value": "io.debezium.time.MicroTimestamp"}}
)
MILLIS_NAMED = DebeziumSettings.from_mapping(
    {"column.logical.types": {"value": "io.debezium.time.Timestamp"}}
)
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
    # schemas off, adaptive: milliseconds or microseconds by the column's precision, which the
    # message does not carry: refused unless column.logical.types names it
    ("1767780000123456", None, "timestamp", DEFAULTS, None),
    ("1767780000123456", None, "timestamp", MICROS_NAMED, "2026-01-07 10:00:00.123456"),
    ("1767780000123", None, "timestamp", MILLIS_NAMED, "2026-01-07 10:00:00.123000"),
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
    # MySQL's TIME: beyond a day and negative
    ("86400000001", MICRO_TIME, "string", DEFAULTS, "24:00:00.000001"),
    ("3020399000000", MICRO_TIME, "string", DEFAULTS, "838:59:59.000000"),
    ("-45000500000", MICRO_TIME, "string", DEFAULTS, "-12:30:00.500000"),
    ("3020400000000", MICRO_TIME, "string", DEFAULTS, None),
    # NanoTimestamp in integer arithmetic (a double loses the last microsecond of these)
    ("1767780000999999000", NANO_TS, "timestamp", DEFAULTS, "2026-01-07 10:00:00.999999"),
    ("-1000", NANO_TS, "timestamp", DEFAULTS, "1969-12-31 23:59:59.999999"),
    # extra places are never rounded: zeros are dropped, other digits refused
    (b64(-123400, 3), DEC3, "decimal(12,2)", DEFAULTS, "-123.40"),
    (b64(-123456, 3), DEC3, "decimal(12,2)", DEFAULTS, None),
    (b64(5000, 3), DEC3, "bigint", DEFAULTS, "5"),
    (b64(5001, 3), DEC3, "bigint", DEFAULTS, None),
    (b64(5001, 3), DEC3, "string", DEFAULTS, "5.001"),
    (b64(5001, 3), DEC3, "double", DEFAULTS, None),
    ("12.345", None, "decimal(12,2)", STRING_DECIMALS, None),
    ("12.340", None, "decimal(12,2)", STRING_DECIMALS, "12.34"),
    # a Date into a timestamp is its midnight; into an integer or a time it is refused
    ("20460", DATE, "timestamp", DEFAULTS, "2026-01-07 00:00:00.000000"),
    ("20460", DATE, "int", DEFAULTS, None),
    ("1767780000123456", MICRO_TS, "date", DEFAULTS, None),
    ("1767780000123456", MICRO_TS, "bigint", DEFAULTS, None),
    ("36000123456", MICRO_TIME, "timestamp", DEFAULTS, None),
    ("2026-01-07T12:30:00+02:30", ZONED, "date", DEFAULTS, None),
    # bytes into binary: the bytes (text of the column: base64), per binary.handling.mode
    ("3q2+7w==", BYTES, "binary", DEFAULTS, "3q2+7w=="),
    ("3q2+7w==", None, "binary", DEFAULTS, "3q2+7w=="),
    (
        "3q2-7w",
        None,
        "binary",
        DebeziumSettings(binary_handling_mode="base64-url-safe"),
        "3q2+7w==",
    ),
    ("deadbeef", None, "binary", DebeziumSettings(binary_handling_mode="hex"), "3q2+7w=="),
    ("deadbeef", STRING, "binary", DebeziumSettings(binary_handling_mode="hex"), "3q2+7w=="),
    ("deadbee", None, "binary", DebeziumSettings(binary_handling_mode="hex"), None),
    ("3q2+7w==", BYTES, "string", DEFAULTS, "3q2+7w=="),
    ("3q2+7w==", BYTES, "bigint", DEFAULTS, None),
    ("not base64", BYTES, "binary", DEFAULTS, None),
    ("text", STRING, "binary", DEFAULTS, "dGV4dA=="),
    # MySQL BIT(n): little-endian bytes
    ("CgA=", BITS12, "bigint", DEFAULTS, "10"),
    ("CgA=", BITS12, "binary", DEFAULTS, "AAo="),
    ("CgA=", BITS12, "string", DEFAULTS, "000000001010"),
    ("Cg==", BITS4, "string", DEFAULTS, "1010"),
    ("Hw==", BITS4, "string", DEFAULTS, None),
    ("Cg==", BITS4, "date", DEFAULTS, None),
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
    # an interval in µs with its months approximated, an array of epoch numbers: refused
    ("2629800000000", DURATION, "bigint", DEFAULTS, None),
    ("2629800000000", DURATION, "string", DEFAULTS, None),
    ("[1767780000123456]", STAMPS, "string", DEFAULTS, None),
    ("[1767780000123456]", STAMPS, "binary", DEFAULTS, None),
    ("[-1,0,7]", FieldSchema("array"), "string", DEFAULTS, "[-1,0,7]"),
]


def _model(raw, field, spark_type, settings):
    try:
        return decode(raw, field, spark_type, settings, "value")
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


@pytest.mark.unit
def test_an_array_is_named_by_its_elements_only_when_they_are_encoded():
    assert array_name({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}) == (
        "array of io.debezium.time.MicroTimestamp"
    )
    assert array_name({"type": "bytes"}) == "array of bytes"
    assert array_name({"type": "string", "name": "io.debezium.data.Uuid"}) is None
    assert array_name({"type": "int32"}) is None and array_name(None) is None
    assert field_kind(STAMPS, "string", DEFAULTS) == (
        "refused",
        "array of io.debezium.time.MicroTimestamp into string",
    )


def _spark_texts(spark, cases) -> dict[int, str | None]:
    """Each case decoded through the path normalize_debezium takes: a column_plan per (declared
    type, settings), all of a row's plans decoded by decode_column."""
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
        for index, (raw, field, *_rest) in enumerate(cases)
    ]
    frame = spark.createDataFrame(rows, f"i int, raw string, field {field_type}")
    kinds = sorted({(case[2], case[3]) for case in cases}, key=repr)
    raw, field = F.col("raw"), F.col("field")
    plans = [
        debezium_decode.column_plan(raw, field, spark_type, settings, F.lit(False), "value")
        for spark_type, settings in kinds
    ]
    decoded = frame.select("i", F.array(*plans).alias("plans")).select(
        "i", debezium_decode.decode_column("plans").alias("decoded")
    )
    return {
        row["i"]: row["decoded"][kinds.index(tuple(cases[row["i"]][2:4]))]["text"]
        for row in decoded.collect()
    }


def test_spark_decodes_every_case_as_the_model(spark):
    expected = {i: _model(*case[:4]) for i, case in enumerate(CASES)}
    assert _spark_texts(spark, [case[:4] for case in CASES]) == expected


_LOGICAL_FIELDS = st.one_of(
    st.builds(
        lambda scale: FieldSchema(
            "bytes", "org.apache.kafka.connect.data.Decimal", {"scale": str(scale)}
        ),
        st.integers(0, 12),
    ),
    st.builds(
        lambda length: FieldSchema("bytes", "io.debezium.data.Bits", {"length": str(length)}),
        st.integers(1, 64),
    ),
    st.sampled_from(
        [
            VAR,
            DATE,
            MICRO_TS,
            MILLI_TS,
            NANO_TS,
            CONNECT_TS,
            CONNECT_DATE,
            MICRO_TIME,
            MILLI_TIME,
            NANO_TIME,
            ZONED,
            ISO_DATE,
            JSON,
            UUID,
            BYTES,
            STRING,
            FieldSchema("int64"),
            FieldSchema("int32", "io.debezium.time.Year"),
            FieldSchema("string", "io.debezium.time.IsoTimestamp"),
            FieldSchema("string", "io.debezium.time.IsoTime"),
            DURATION,
            STAMPS,
            FieldSchema("array", "array of bytes"),
            FieldSchema("array"),
        ]
    ),
    st.none(),
)
_RAW = st.one_of(
    st.integers(-(2**64), 2**64).map(str),
    st.integers(-(10**12), 10**12).map(str),
    st.integers(-(2**63), 2**63 - 1).map(lambda n: str(n * 1000)),
    st.binary(max_size=120).map(lambda b: base64.b64encode(b).decode()),
    st.binary(max_size=12).map(lambda b: b.hex()),
    st.builds(
        lambda scale, value, size: json.dumps(
            {"scale": scale, "value": b64(value, size)}, separators=(",", ":")
        ),
        st.integers(0, 20),
        st.integers(-(2**60), 2**60),
        st.just(9),
    ),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
        lambda d: d.isoformat() + "Z"
    ),
    st.from_regex(r"-?[0-9]{1,6}\.[0-9]{0,8}", fullmatch=True),
    st.text(string.printable.strip(), max_size=12),
)
_TYPES = st.sampled_from(
    [
        "decimal(12,2)",
        "decimal(38,10)",
        "decimal(5,0)",
        "int",
        "bigint",
        "double",
        "boolean",
        "date",
        "timestamp",
        "string",
        "binary",
    ]
)
_SETTINGS = st.builds(
    DebeziumSettings,
    decimal_handling_mode=st.sampled_from(["precise", "string", "double"]),
    time_precision_mode=st.sampled_from(["adaptive", "connect", "isostring"]),
    binary_handling_mode=st.sampled_from(["bytes", "base64", "base64-url-safe", "hex"]),
    column_logical_types=st.sampled_from(
        [(), (("value", "io.debezium.time.MicroTimestamp"),), (("value", "io.debezium.time.Date"),)]
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SETTINGS, st.lists(st.tuples(_RAW, _LOGICAL_FIELDS, _TYPES), min_size=1, max_size=120))
def test_spark_decodes_random_values_of_every_kind_as_the_model(spark, debezium, cases):
    """Random values (numbers of every size and unit, bytes, ISO texts, decimal objects, text)
    under every logical type and setting, into every declared type: Spark's text and refusal
    equal the model's (one settings value a draw: a plan per declared type)."""
    cases = [(*case, debezium) for case in cases]
    assert _spark_texts(spark, cases) == {i: _model(*case) for i, case in enumerate(cases)}
