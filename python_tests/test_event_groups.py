"""Event groups' membership rules, checked against a plain statement of them."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_cdc.schema_drift.event_groups import (
    EventGroup,
    Grouping,
    GroupingError,
    parse_grouping,
    type_bucket,
)

pytestmark = pytest.mark.unit

TYPES = ["order_placed", "order_paid", "payment_failed", "signup", "1.1", "Order_X"]


def test_a_type_belongs_to_the_first_group_that_takes_it():
    grouping = parse_grouping(
        {"orders": ["order_*"], "payments": "payment_*,signup", "rest": ["*"]}
    )
    assert grouping is not None
    assert [grouping.group_of(t) for t in TYPES] == [
        "orders",
        "orders",
        "rest",  # "payment_*,signup" is one glob, not two
        "rest",
        "rest",
        "rest",  # globs are case-sensitive, as event types are
    ]
    assert grouping.types_of("orders", TYPES) == ["order_paid", "order_placed"]
    listed = parse_grouping({"payments": ["payment_failed", "signup"], "rest": "*"})
    assert listed is not None and listed.types_of("payments", TYPES) == ["payment_failed", "signup"]


def test_hash_buckets_split_the_types_by_a_stable_hash():
    grouping = parse_grouping({"even": ["hash:0/2"], "odd": ["hash:1/2"]})
    assert grouping is not None
    for event_type in TYPES:
        digest = hashlib.sha256(event_type.encode()).hexdigest()
        expected = "even" if int(digest[:16], 16) % 2 == 0 else "odd"
        assert grouping.group_of(event_type) == expected
    assert {grouping.group_of(t) for t in TYPES} == {"even", "odd"}  # both used by these six


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=30), st.integers(1, 7))
def test_every_type_is_in_exactly_one_bucket_group(event_types, buckets):
    grouping = parse_grouping({f"b{i}": [f"hash:{i}/{buckets}"] for i in range(buckets)})
    assert grouping is not None
    members = [set(grouping.types_of(g.name, event_types)) for g in grouping.groups]
    assert set().union(*members) == set(event_types)
    assert sum(len(m) for m in members) == len(set(event_types))
    assert all(type_bucket(t, buckets) < buckets for t in event_types)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"orders": ["order_*"]}, "must take every event type"),
        ({"a": ["hash:0/3"], "b": ["hash:1/3"]}, "must take every event type"),
        ({"a": ["hash:3/3"], "rest": "*"}, "not a hash bucket"),
        ({"a": ["hash:1/0"], "rest": "*"}, "not a hash bucket"),
        ({"Orders": ["*"]}, "lower-case letters"),
        ({"a-b": ["*"]}, "lower-case letters"),
        ({"a": [], "rest": "*"}, "give a selector"),
        ({"a": [" "], "rest": "*"}, "an empty selector"),
        (["a"], "a mapping"),
    ],
)
def test_a_grouping_that_would_lose_types_or_name_bad_tables_is_refused(setting, message):
    with pytest.raises(GroupingError, match=message):
        parse_grouping(setting)


def test_no_setting_is_no_grouping_and_a_recorded_grouping_reads_back_equal():
    assert parse_grouping(None) is None and parse_grouping({}) is None
    grouping = Grouping((EventGroup("b", ("x_*", "hash:0/2")), EventGroup("a", ("*",))))
    assert Grouping.from_rows(reversed(grouping.as_rows())) == grouping
    with pytest.raises(GroupingError, match="no event group 'c'"):
        grouping.group("c")
