"""Each Debezium connector family's position, read from ``source`` blocks shaped as the
connectors' documentation shows them (the families without a server here) and as captured from
the real MariaDB and PostgreSQL connectors; the Spark reading equals the plain-Python one over
random blocks."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_cdc.change_events.debezium.positions import FAMILIES, position_of

# source blocks as each connector's documentation shows them (values of its examples)
DOCUMENTED = {
    "postgresql": (
        {"connector": "postgresql", "ts_ms": 1559033904863, "lsn": 24023128, "txId": 555},
        (24023128,),
    ),
    "mysql": (
        {
            "connector": "mysql",
            "ts_ms": 1465581029100,
            "server_id": 223344,
            "gtid": None,
            "file": "mysql-bin.000003",
            "pos": 484,
            "row": 0,
        },
        (3, 484, 0),
    ),
    "mariadb": (
        {"connector": "mariadb", "file": "mysql-bin.000001", "pos": 2566, "row": 0},
        (1, 2566, 0),
    ),
    "sqlserver": (
        {
            "connector": "sqlserver",
            "change_lsn": "00000027:00000758:0003",
            "commit_lsn": "00000027:00000758:0005",
            "event_serial_no": "1",
        },
        (0x27, 0x758, 5, 0x27, 0x758, 3, 1),
    ),
    "db2": (
        {
            "connector": "db2",
            "change_lsn": "00000000:0000150f:0000000000048fca",
            "commit_lsn": "00000000:0000153d:0000000000048fd1",
        },
        (0, 0x153D, 0x48FD1, 0, 0x150F, 0x48FCA),
    ),
    "informix": (
        {"connector": "informix", "commit_lsn": "7187361", "change_lsn": "7187360"},
        (7187361, 7187360),
    ),
    "oracle": (
        {"connector": "oracle", "scn": "2122185", "commit_scn": "2122186", "ssn": 0},
        (2122186, 2122185, 0),
    ),
    "mongodb": ({"connector": "mongodb", "ts_ms": 1558965508000, "ord": 31}, (1558965508000, 31)),
}


@pytest.mark.parametrize("family", sorted(DOCUMENTED))
def test_each_family_reads_its_documented_position(family):
    source, expected = DOCUMENTED[family]
    assert position_of(source) == (expected, None)


def test_snapshot_reads_and_missing_optional_parts_are_zeros():
    # a snapshot read of SQL Server has no change_lsn and no event_serial_no; Oracle's no
    # commit_scn (its scn stands in)
    sqlserver = {"connector": "sqlserver", "commit_lsn": "00000027:00000758:0005"}
    assert position_of(sqlserver) == ((0x27, 0x758, 5, 0, 0, 0, 0), None)
    oracle = {"connector": "oracle", "scn": "2122185", "commit_scn": None}
    assert position_of(oracle) == ((2122185, 2122185, 0), None)
    assert position_of({"connector": "mysql", "file": "bin.000002", "pos": 4}) == ((2, 4, 0), None)


@pytest.mark.parametrize(
    "source",
    [
        {"connector": "postgresql", "lsn": None},
        {"connector": "postgresql", "lsn": "12a"},
        {"connector": "postgresql", "lsn": 2**63},
        {"connector": "mysql", "file": "mysql-bin", "pos": 4},
        {"connector": "mysql", "file": "mysql-bin.000001"},
        {"connector": "sqlserver", "commit_lsn": "00000027:00000758"},
        {"connector": "sqlserver", "commit_lsn": "0027:0758:0005", "change_lsn": "zz:0:0"},
        {"connector": "db2", "commit_lsn": "0:0:ffffffffffffffff"},
        {"connector": "mongodb", "ord": 1},
    ],
)
def test_an_unreadable_position_of_a_known_family_is_an_error(source):
    assert position_of(source) == (None, f"invalid_position:{source['connector']}")


def test_other_families_have_no_position():
    assert position_of({"connector": "vitess", "vgtid": "[]"}) == (None, None)
    assert position_of({"ts_ms": 5, "lsn": 7}) == (None, None)
    assert position_of(None) == (None, None)


def test_the_binlog_order_of_one_second_is_the_order_of_positions():
    """Three updates of one row in one transaction, then an insert and a delete, all in one
    second (their ts_ms equal), as the real MariaDB connector sent them: the positions order
    them as the binlog does."""
    captured = [
        ("mysql-bin.000001", 1428, 0),
        ("mysql-bin.000001", 1627, 0),
        ("mysql-bin.000001", 1826, 0),
        ("mysql-bin.000001", 2100, 0),
        ("mysql-bin.000001", 2331, 0),
        ("mysql-bin.000002", 4, 0),
        ("mysql-bin.000010", 4, 0),
    ]
    positions = [
        position_of({"connector": "mariadb", "file": f, "pos": p, "row": r})[0]
        for f, p, r in captured
    ]
    assert positions == sorted(positions)
    # the file index is compared as a number: .000010 after .000002
    assert positions[-1] > positions[-2]


_TEXTS = st.one_of(
    st.none(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.text("0123456789abcdefABCDEF:.-x ", max_size=22),
    st.sampled_from(
        ["mysql-bin.000003", "00000027:00000758:0005", "0:0:ffffffffffffffff", "a.b.7", " 12 "]
    ),
    st.booleans(),
)


@st.composite
def _sources(draw) -> dict:
    family = draw(st.sampled_from([*sorted(FAMILIES), "vitess", None]))
    fields = {f for parts in FAMILIES.values() for part in parts for f in part.fields}
    chosen = draw(st.sets(st.sampled_from(sorted(fields))))
    return {"connector": family, **{name: draw(_TEXTS) for name in chosen}}


# Each draw is one Spark job: fewer, larger draws (a draw of 40 sources took 0.6 s).
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_sources(), min_size=1, max_size=300))
def test_spark_reads_every_position_as_the_model_does(spark, sources):
    from pyspark.sql import functions as F

    from spark_cdc.change_events.debezium.positions import position_columns

    rows = [(i, json.dumps(source)) for i, source in enumerate(sources)]
    frame = spark.createDataFrame(rows, "i int, source string")
    parsed = F.from_json("source", "map<string,string>")
    position, error = position_columns(parsed)
    found = {
        r["i"]: (None if r["p"] is None else tuple(r["p"]), r["e"])
        for r in frame.select("i", position.alias("p"), error.alias("e")).collect()
    }
    for i, source in enumerate(sources):
        # JSON text as Spark reads a map<string,string> value: a number's text, a string as is
        as_read = {k: v for k, v in json.loads(json.dumps(source)).items()}
        assert found[i] == position_of(as_read), source
