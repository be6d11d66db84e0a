"""Variation hashes: the Spark expression against the plain-Python model, and its properties."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.variation import (
    MALFORMED_JSON,
    MISSING_EVENT_TYPE,
    NOT_AN_OBJECT,
    hash_of,
    parse_error,
    parsed_payload,
    signature_of,
    variation_hash,
    variation_signature,
)

KEYS = st.sampled_from(["a", "b", "B", "user_agent", "x y", "1", "é", "a`b", "_z", "ключ"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
OBJECTS = st.dictionaries(KEYS, JSON_VALUES, max_size=5)


def _spark_signatures(spark, payloads: list[str]) -> list[tuple[str, str]]:
    frame = spark.createDataFrame([(p,) for p in payloads], "payload string")
    parsed = parsed_payload(frame.payload)
    rows = frame.select(
        variation_signature(parsed).alias("signature"), variation_hash(parsed).alias("hash")
    ).collect()
    return [(row.signature, row.hash) for row in rows]


@settings(max_examples=25, deadline=None)
@given(st.lists(OBJECTS, min_size=1, max_size=20))
def test_spark_signature_equals_the_python_model(spark, objects):
    payloads = [json.dumps(o) for o in objects]
    spark_side = _spark_signatures(spark, payloads)
    assert [s for s, _ in spark_side] == [signature_of(o) for o in objects]
    assert [h for _, h in spark_side] == [hash_of(p) for p in payloads]


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        # attribute order does not count, at any depth
        ('{"event_type":"e","a":1,"b":"x"}', '{"b":"y","event_type":"f","a":2}', True),
        ('{"o":{"p":1,"q":true}}', '{"o":{"q":false,"p":7}}', True),
        # values do not count, nor the precision of decimals
        ('{"price":1.5}', '{"price":1234.125}', True),
        ('{"price":1.5}', '{"price":1e3}', True),
        # a new top-level, nested, or array-of-objects attribute is a new variation
        ('{"a":1}', '{"a":1,"has_plugins":true}', False),
        ('{"o":{"p":1}}', '{"o":{"p":1,"r":null}}', False),
        ('{"items":[{"sku":"a"}]}', '{"items":[{"sku":"a","qty":1}]}', False),
        # the union of the attributes of an array's objects is what counts
        ('{"items":[{"sku":"a"},{"qty":1}]}', '{"items":[{"sku":"a","qty":2}]}', True),
        # a kind change is a new variation (integers and other numbers differ)
        ('{"a":1}', '{"a":"1"}', False),
        ('{"a":1}', '{"a":1.0}', False),
        ('{"a":null}', '{"a":1}', False),
    ],
)
def test_variation_hash_properties(spark, first, second, same):
    (_, left), (_, right) = _spark_signatures(spark, [first, second])
    assert (left == right) is same


def test_parse_errors(spark):
    lines = [
        '{"event_type":"a","x":1}',
        "{not json",
        "",
        '{"event_type":"a","x":1,"x":2}',
        "[1,2]",
        '"text"',
        '{"x":1}',
        '{"event_type":null}',
        '{"event_type":"  "}',
        '{"event_type":{"name":"a"}}',
    ]
    frame = spark.createDataFrame([(line,) for line in lines], "payload string")
    errors = [
        row[0]
        for row in frame.select(parse_error(frame.payload, parsed_payload(frame.payload))).collect()
    ]
    assert errors == [
        None,
        MALFORMED_JSON,
        MALFORMED_JSON,
        MALFORMED_JSON,
        NOT_AN_OBJECT,
        NOT_AN_OBJECT,
        MISSING_EVENT_TYPE,
        MISSING_EVENT_TYPE,
        MISSING_EVENT_TYPE,
        MISSING_EVENT_TYPE,
    ]


def test_bronze_keeps_every_line_and_takes_only_new_files(spark):
    raw = spark.createDataFrame(
        [
            ('{"event_type":" click ","x":1}', "f1", "b1", None),
            ("{broken", "f1", "b1", None),
            ('{"event_type":"click","x":2}', "f2", "b2", None),
        ],
        "payload string, source_file string, batch_id string, file_modified_at timestamp_ntz",
    )
    existing = bronze_increment(raw.where("source_file = 'f1'"), None, "run-1").localCheckpoint()
    first = existing.collect()
    assert [(r.load_seq, r.event_type, r.parse_error, r.has_parse_error) for r in first] == [
        (1, "click", None, False),
        (1, None, MALFORMED_JSON, True),
    ]
    assert first[0].variation_hash == hash_of('{"event_type":"x","x":1}')
    assert first[1].variation_hash is None and first[1].payload == "{broken"
    second = bronze_increment(raw, existing, "run-2").collect()
    assert [(r.load_seq, r.source_file, r.load_id) for r in second] == [(2, "f2", "run-2")]
    assert second[0].variation_hash == first[0].variation_hash
