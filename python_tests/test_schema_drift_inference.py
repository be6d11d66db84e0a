"""Superset schemas: the widening rules, conflicts, flattening, and Spark's own JSON inference."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from spark_cdc.schema_drift.inference import (
    NameCollision,
    TypeConflict,
    evolve,
    finalize,
    flatten,
    infer_type,
    merge_types,
)


def _struct(**fields) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in sorted(fields.items())])


@pytest.mark.parametrize(
    ("left", "right", "merged"),
    [
        (1, 2**40, LongType()),
        (1, 2.5, DoubleType()),
        (2**64, 1, DoubleType()),
        (1, "a", StringType()),
        (2.5, "a", StringType()),
        (True, 1, StringType()),
        (True, "yes", StringType()),
        (None, True, BooleanType()),
        ({"a": 1}, {"b": "x"}, _struct(a=LongType(), b=StringType())),
        ({"a": 1}, {"a": 1.5}, _struct(a=DoubleType())),
        ([1], [2.5], ArrayType(DoubleType())),
        ([{"a": 1}], [{"b": True}], ArrayType(_struct(a=LongType(), b=BooleanType()))),
    ],
)
def test_widening_rules(left, right, merged):
    assert merge_types(infer_type(left), infer_type(right)) == merged
    assert merge_types(infer_type(right), infer_type(left)) == merged


@pytest.mark.parametrize(
    ("left", "right", "path"),
    [
        ({"device": {"os": "x"}}, {"device": "pc"}, "$.device"),
        ({"tags": ["a"]}, {"tags": "a"}, "$.tags"),
        ({"o": {"p": [1]}}, {"o": {"p": {"q": 1}}}, "$.o.p"),
        ({"items": [{"a": 1}]}, {"items": [[1]]}, "$.items[]"),
    ],
)
def test_structural_conflicts_name_their_path(left, right, path):
    with pytest.raises(TypeConflict) as raised:
        merge_types(infer_type(left), infer_type(right))
    assert raised.value.path == path
    assert str(raised.value).startswith(f"type_conflict:{path}:")


def test_names_equal_ignoring_case_collide():
    with pytest.raises(NameCollision):
        merge_types(infer_type({"userId": 1}), infer_type({"userid": 2}))
    with pytest.raises(NameCollision):
        flatten(infer_type({"a": {"b": 1}, "a__b": 2}))
    with pytest.raises(NameCollision):
        flatten(infer_type({"_load_seq": 1}), reserved=["_load_seq"])


def test_finalize_leaves_out_attributes_only_seen_as_null_and_flatten_keeps_arrays():
    superset = infer_type({"a": None, "b": [], "c": {"d": None}, "e": {"f": 1, "g": [{"h": "x"}]}})
    final = finalize(superset)
    columns = [(c.name, c.path, c.data_type) for c in flatten(final)]
    assert columns == [
        ("e__f", ("e", "f"), LongType()),
        ("e__g", ("e", "g"), ArrayType(_struct(h=StringType()))),
    ]


def test_evolve_skips_conflicting_prototypes_in_order():
    outcome = evolve(
        None,
        [
            ("v1", '{"event_type":"1.1","user_agent":"x"}'),
            ("v2", '{"event_type":"1.1","user_agent":{"name":"x"}}'),
            ("v3", '{"event_type":"1.1","user_agent":"x","has_plugins":true}'),
        ],
    )
    assert outcome.accepted == ["v1", "v3"]
    assert list(outcome.conflicts) == ["v2"]
    assert outcome.superset == _struct(
        event_type=StringType(), has_plugins=BooleanType(), user_agent=StringType()
    )


# Values without nulls, empty arrays or empty strings: there Spark's inference and these rules
# must agree whenever the rules accept every prototype (Spark turns structural conflicts into
# strings, and infers an empty string as null where these rules keep it a string).
KEYS = st.sampled_from(["a", "b", "c", "d"])
SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**62), max_value=2**62),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(min_size=1, max_size=3),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), min_size=1, max_size=6))
def test_superset_equals_spark_json_inference_when_nothing_conflicts(spark, prototypes):
    texts = [json.dumps(p) for p in prototypes]
    outcome = evolve(None, list(zip(map(str, range(len(texts))), texts, strict=True)))
    if outcome.conflicts:
        return
    inferred = spark.read.json(spark.sparkContext.parallelize(texts)).schema
    assert finalize(outcome.superset) == inferred
