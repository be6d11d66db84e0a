"""Debezium change-event JSON normalized into the feed and resolved like any other events."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date, datetime
from decimal import Decimal

from change_event_support import (
    HIGH,
    expected_versions,
    run_incrementally,
    state_of,
    versions_of,
)

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.debezium.model import feed_events
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.pipeline import (
    history_increment,
    ledger_increment,
    merge_versions,
)
from spark_cdc.change_events.reference import resolve_reference

SCHEMA = TargetSchema({"id": "int", "name": "string", "vip": "boolean"}, ("id",))
MS = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC


def message(
    op, before=None, after=None, lsn=None, second=0, envelope=True, connector="postgresql"
) -> str:
    payload = {
        "before": before,
        "after": after,
        "source": {"connector": connector, "ts_ms": MS + second * 1000, "lsn": lsn},
        "op": op,
        "ts_ms": MS + second * 1000 + 5,
    }
    return json.dumps({"schema": {}, "payload": payload} if envelope else payload)


def at(second: int) -> datetime:
    return datetime(2026, 1, 1, 0, 0, second)


def test_debezium_messages_resolve_with_key_changes_and_quarantine(spark):
    update = message("u", None, {"id": 1, "name": "b", "vip": True}, lsn=20, second=2)
    batch_1 = [
        message("c", None, {"id": 1, "name": "a", "vip": False}, lsn=10, second=1),
        update,
        message("r", None, {"id": 3, "name": "snap"}, lsn=5, second=0, envelope=False),
    ]
    batch_2 = [
        update,  # redelivered (at-least-once)
        message("d", {"id": 1}, None, lsn=30, second=3),  # primary-key change 1 -> 2 ...
        message("c", None, {"id": 2, "name": "b2", "vip": True, "extra": 1}, lsn=30, second=3),
        message("d", {"id": 3, "name": "snap"}, None, lsn=40, second=4),
        message("t", lsn=50, second=5),
        None,  # Kafka tombstone following a delete
        "{not json",
    ]
    rows = [(b, v) for b, batch in ((1, batch_1), (2, batch_2)) for v in batch]
    messages = spark.createDataFrame(rows, "_batch_id long, value string")
    feed = normalize_debezium(messages, SCHEMA)
    assert feed.count() == len(rows)  # one event per message: the resolver pairs a key change

    config = SourceConfig("dbz", SCHEMA)
    ledger = ledger_increment(feed, None, config, "run").localCheckpoint()
    history = history_increment(ledger, None, None, config, HIGH, "run")
    assert state_of(history, SCHEMA) == {(2,): (2, "b2", True, at(1), at(3), "update")}
    statuses = {
        (row["change_type"], row["status"], row["quarantine_reason"]) for row in ledger.collect()
    }
    assert statuses == {
        ("insert", "applied", None),
        ("update", "applied", None),
        ("update", "duplicate", None),
        ("delete", "applied", None),
        # a source that does not apply truncates (SourceConfig.truncate None) quarantines them
        ("truncate", "quarantined", "unknown_change_type:truncate"),
        ("tombstone", "skipped", "tombstone"),
        ("unparseable", "quarantined", "unknown_change_type:unparseable"),
    }
    halves = sorted(
        (r["change_type"], r["status"]) for r in ledger.where("event_seq = 30").collect()
    )
    assert halves == [("delete", "applied"), ("insert", "applied")]  # each with its own message


def _feed_tuples(rows) -> Counter:
    return Counter(
        (
            r["change_type"],
            r["event_ts"],
            r["event_seq"],
            None if r["column_names"] is None else tuple(r["column_names"]),
            None if r["column_values"] is None else tuple(r["column_values"]),
            None if r["old_key_values"] is None else tuple(r["old_key_values"]),
            None if r["event_position"] is None else tuple(r["event_position"]),
            r["_landing_error"],
        )
        for r in rows
    )


def _model_tuples(events) -> Counter:
    return Counter(
        (
            e.change_type,
            e.event_ts,
            e.event_seq,
            e.column_names,
            e.column_values,
            e.old_key_values,
            e.event_position,
            e.landing_error,
        )
        for e in events
    )


def test_normalization_edge_cases_match_the_model_and_the_docs(spark):
    no_source_ts = json.loads(message("c", None, {"id": 7, "name": "n"}, lsn=70, second=7))
    del no_source_ts["payload"]["source"]["ts_ms"]
    no_ts_at_all = json.loads(message("c", None, {"id": 8, "name": "m"}, lsn=80, second=8))
    del no_ts_at_all["payload"]["source"]["ts_ms"], no_ts_at_all["payload"]["ts_ms"]
    no_ts_delete = json.loads(message("d", {"id": 9}, None, lsn=80, second=8))
    del no_ts_delete["payload"]["source"]["ts_ms"], no_ts_delete["payload"]["ts_ms"]
    pair = [
        message("d", {"id": 1}, None, lsn=30, second=3),
        message("c", None, {"id": 2, "name": "b"}, lsn=30, second=3),
    ]
    batches = [
        [
            # A key change without a position (a connector of no known family, no lsn): the
            # resolver cannot pair it.
            message("d", {"id": 3}, None, lsn=None, second=1, connector=None),
            message("c", None, {"id": 4, "name": "d"}, lsn=None, second=1, connector=None),
            # A PostgreSQL message without its lsn: no position, quarantined.
            message("c", None, {"id": 6, "name": "f"}, lsn=None, second=2),
            # The same pair twice in one batch (a redelivery): two events each.
            *pair,
            *pair,
            message("x", None, {"id": 5, "name": "e"}, lsn=60, second=6),  # an unknown op
            json.dumps(no_source_ts),  # the envelope's ts_ms stands in
            json.dumps(no_ts_at_all),  # no ts_ms at all: quarantined
            json.dumps(no_ts_delete),
        ],
        pair,  # the pair again in a batch of its own
    ]
    rows = [(b, v) for b, batch in enumerate(batches, start=1) for v in batch]
    feed = normalize_debezium(spark.createDataFrame(rows, "_batch_id long, value string"), SCHEMA)
    spark_feed = _feed_tuples(feed.collect())
    assert spark_feed == _model_tuples(feed_events(batches, SCHEMA))

    kinds = Counter(kind for kind, *_ in spark_feed.elements())
    # 13 messages, 13 events: normalization pairs nothing (the resolver does, test below)
    assert kinds == Counter({"delete": 5, "insert": 7, "x": 1})
    envelope_ts = next(t for k, t, s, *_ in spark_feed if s == 70)
    assert envelope_ts == datetime(2026, 1, 1, 0, 0, 7, 5000)
    assert {t for k, t, s, *_ in spark_feed if s == 80} == {None}

    config = SourceConfig("dbz_edges", SCHEMA)
    ledger = ledger_increment(feed, None, config, "run")
    reasons = Counter(r["quarantine_reason"] for r in ledger.collect())
    assert reasons == Counter(
        {
            None: 9,
            "unknown_change_type:x": 1,
            "missing_event_ts": 2,
            "invalid_position:postgresql": 1,
        }
    )


def binlog_message(op, before=None, after=None, pos=0, row=0, file="mysql-bin.000001") -> str:
    """A MariaDB connector's message as it sends them: whole-second ts_ms, the binlog position
    in ``file``, ``pos`` and ``row``, no lsn."""
    payload = {
        "before": before,
        "after": after,
        "source": {
            "connector": "mariadb",
            "ts_ms": MS,
            "file": file,
            "pos": pos,
            "row": row,
            "gtid": "0-1-6",
            "server_id": 1,
        },
        "op": op,
        "ts_ms": MS + 7,
    }
    return json.dumps({"schema": {}, "payload": payload})


def test_a_mariadb_capture_with_equal_ts_ms_resolves_in_binlog_order(spark):
    """Every message in one second (as MariaDB's binlog stamps them), delivered out of order:
    three updates of one row in a transaction, an insert and a delete of one key, a key change
    then an update of the new key, across two binlog files. The binlog position decides: the
    last update wins, the deleted key stays deleted, the moved row keeps its update."""
    in_order = [
        binlog_message("c", None, {"id": 1, "name": "a", "vip": False}, pos=1164),
        binlog_message("c", None, {"id": 2, "name": "b", "vip": False}, pos=1164, row=1),
        binlog_message("u", {"id": 1}, {"id": 1, "name": "u1", "vip": False}, pos=1428),
        binlog_message("u", {"id": 1}, {"id": 1, "name": "u2", "vip": True}, pos=1627),
        binlog_message("u", {"id": 1}, {"id": 1, "name": "u3", "vip": False}, pos=1826),
        binlog_message("c", None, {"id": 3, "name": "ghost", "vip": False}, pos=2100),
        binlog_message("d", {"id": 3, "name": "ghost"}, None, pos=2331),
        None,
        binlog_message("d", {"id": 2, "name": "b"}, None, pos=2566),
        binlog_message("c", None, {"id": 5, "name": "b", "vip": False}, pos=2566),
        binlog_message("u", {"id": 5}, {"id": 5, "name": "b5", "vip": True}, pos=2751),
        # the next binlog file: position 4 there comes after 2751 in file 1
        binlog_message(
            "u", {"id": 1}, {"id": 1, "name": "u4", "vip": True}, pos=4, file="mysql-bin.000002"
        ),
    ]
    batches = [list(reversed(in_order[:8])), list(reversed(in_order[8:]))]
    rows = [(b, v) for b, batch in enumerate(batches, start=1) for v in batch]
    feed = normalize_debezium(spark.createDataFrame(rows, "_batch_id long, value string"), SCHEMA)
    assert _feed_tuples(feed.collect()) == _model_tuples(feed_events(batches, SCHEMA))

    config = SourceConfig("dbz_binlog", SCHEMA)
    ledger = ledger_increment(feed, None, config, "run").localCheckpoint()
    history = history_increment(ledger, None, None, config, HIGH, "run")
    second = at(0)
    assert state_of(history, SCHEMA) == {
        (1,): (1, "u4", True, second, second, "update"),
        (5,): (5, "b5", True, second, second, "update"),
    }
    assert history.where("is_ambiguous").count() == 0
    # by the model too: events applied one by one in position order
    expected = resolve_reference({}, feed_events(batches, SCHEMA), SCHEMA)
    assert {key: row.values["name"] for key, row in expected.state.items()} == {
        (1,): "u4",
        (5,): "b5",
    }
    assert expected.ambiguous == set()


TOASTED = "__debezium_unavailable_value"
VERSION_FIELDS = ("id", "version_id", "valid_from", "valid_to", "change_type", "is_deleted")
VERSION_FIELDS += ("name", "vip", "created_at", "is_current")


def test_a_key_change_pairs_whichever_batches_and_runs_its_halves_land_in(spark):
    """A primary-key change (Debezium: a delete of the old key and a create of the new key at one
    lsn; Kafka partitions them by key, so they may land in different batches, in either order,
    resolved by different runs) whose create leaves a TOASTed column unchanged: every split ends
    in the same history as one batch, version ids included, equal to the model's: the row keeps
    its created_at and the unchanged value, the old key's last version is its move-out."""
    create = message("c", None, {"id": 1, "name": "long text", "vip": False}, lsn=10, second=1)
    other = message("c", None, {"id": 9, "name": "other", "vip": True}, lsn=11, second=1)
    delete = message("d", {"id": 1}, None, lsn=30, second=3)
    moved = message("c", None, {"id": 2, "name": TOASTED, "vip": True}, lsn=30, second=3)
    later = message("u", {"id": 2}, {"id": 2, "name": TOASTED, "vip": False}, lsn=40, second=4)
    splits = {
        "one batch": [[create, other, delete, moved, later]],
        "delete first": [[create, other], [delete], [moved, later]],
        "create first": [[create, other], [moved, later], [delete]],
        "create first, redelivered": [[create, other], [moved], [later, delete, moved]],
    }
    config = SourceConfig("dbz_split", SCHEMA)
    histories = {}
    for name, runs in splits.items():
        batches = [[(index + 1, feed_events([run], SCHEMA))] for index, run in enumerate(runs)]
        _, history = run_incrementally(spark, batches, config, marks=True)
        histories[name] = {tuple(r[c] for c in VERSION_FIELDS) for r in history.collect()}
        messages = [m for run in runs for m in run]
        expected = resolve_reference({}, feed_events([messages], SCHEMA), SCHEMA)
        assert versions_of(history, SCHEMA) == expected_versions(expected, SCHEMA), name
    assert all(h == histories["one batch"] for h in histories.values())
    current = {(r[0], r[6], r[7], r[8]) for r in histories["one batch"] if r[9] and not r[5]}
    assert current == {(2, "long text", False, at(1)), (9, "other", True, at(1))}
    moves_out = {r[4] for r in histories["one batch"] if r[0] == 1 and r[5]}
    assert moves_out == {"delete"}


def _schema_field(name: str, kind: str, logical: str | None = None, **parameters) -> dict:
    field = {"field": name, "type": kind, "optional": True}
    if logical:
        field["name"] = logical
    if parameters:
        field["parameters"] = {k.replace("_", "."): str(v) for k, v in parameters.items()}
    return field


DECIMAL = "org.apache.kafka.connect.data.Decimal"
MICRO_TS = "io.debezium.time.MicroTimestamp"
BASE_FIELDS = [_schema_field("id", "int32"), _schema_field("name", "string")]
EVOLVED_FIELDS = [
    _schema_field("discount", "bytes", DECIMAL, scale=2, connect_decimal_precision=6),
    _schema_field("seen_at", "int64", "io.debezium.time.MicroTimestamp"),
    _schema_field("born", "int32", "io.debezium.time.Date"),
    _schema_field("visits", "int64"),
    _schema_field("blob", "bytes"),
    _schema_field("ratio", "float64"),
    _schema_field("pickup", "int64", "io.debezium.time.MicroTime"),
]


def typed_message(after: dict, fields: list[dict], lsn: int, second: int) -> str:
    """A create with the schema envelope (JsonConverter, schemas on)."""
    image = {"type": "struct", "field": "after", "fields": fields}
    payload = {
        "before": None,
        "after": after,
        "source": {"connector": "postgresql", "ts_ms": MS + second * 1000, "lsn": lsn},
        "op": "c",
        "ts_ms": MS + second * 1000 + 5,
    }
    return json.dumps({"schema": {"type": "struct", "fields": [image]}, "payload": payload})


def test_evolved_columns_take_the_type_their_schema_gives_and_refuse_another(spark):
    """Columns a source discovers are typed by the envelope's schema of the first batch that
    brings them (a decimal of its scale, a timestamp, a date, integers, bytes, a double; a time
    as its text), the same by incremental runs as by one; a later message that gives a column
    another type (a decimal of another scale) is quarantined, never cast into it."""
    schema = TargetSchema({"id": "int", "name": "string"}, ("id",))
    first = {
        "id": 1,
        "name": "a",
        "discount": "/do=",  # -5.50 (unscaled -550, two's complement, big-endian)
        "seen_at": 1_767_862_800_123_456,  # 2026-01-08 09:00:00.123456
        "born": -25_567,  # 1900-01-01
        "visits": 9_007_199_254_740_993,  # above a double's exact integers
        "blob": "3q2+7w==",  # de ad be ef
        "ratio": 0.1,
        "pickup": 3_020_000_000,  # 838:53:20 would not fit a day: 00:50:20 here
    }
    second = {"id": 2, "name": "b", "discount": "AH0=", "seen_at": None}  # 1.25
    rescaled = [
        *BASE_FIELDS,
        _schema_field("discount", "bytes", DECIMAL, scale=3, connect_decimal_precision=6),
    ]
    runs = [
        [typed_message(first, BASE_FIELDS + EVOLVED_FIELDS, 10, 1)],
        [
            typed_message(second, BASE_FIELDS + EVOLVED_FIELDS[:2], 20, 2),
            typed_message({"id": 3, "name": "c", "discount": "AH0="}, rescaled, 30, 3),
        ],
    ]
    config = SourceConfig("dbz_typed", schema, evolve_columns=True)

    def rows_of(batches):
        rows = [(b, v) for b, batch in batches for v in batch]
        frame = spark.createDataFrame(rows, "_batch_id long, value string")
        return normalize_debezium(frame, schema, undeclared=True)

    one = rows_of(list(enumerate(runs, start=1)))
    ledger = ledger_increment(one, None, config, "one").localCheckpoint()
    whole = history_increment(ledger, None, None, config, HIGH, "one")
    reasons = {r["quarantine_reason"] for r in ledger.collect()}
    assert reasons == {None, "undecodable:discount:decimal(6,3) into decimal(6,2)"}
    types = {f.name: f.dataType.simpleString() for f in whole.schema.fields}
    assert {c: types[c] for c in ("discount", "seen_at", "born", "visits", "blob", "ratio")} == {
        "discount": "decimal(6,2)",
        "seen_at": "timestamp",
        "born": "date",
        "visits": "bigint",
        "blob": "binary",
        "ratio": "double",
    }
    assert types["pickup"] == "string"
    current = {r["id"]: r for r in whole.where("is_current").collect()}
    assert set(current) == {1, 2}
    row = current[1]
    assert row["discount"] == Decimal("-5.50") and row["visits"] == 9_007_199_254_740_993
    assert row["seen_at"] == datetime(2026, 1, 8, 9, 0, 0, 123456)
    assert row["born"] == date(1900, 1, 1) and bytes(row["blob"]) == bytes.fromhex("deadbeef")
    assert row["ratio"] == 0.1 and row["pickup"] == "00:50:20.000000"
    assert current[2]["discount"] == Decimal("1.25") and current[2]["born"] is None

    # run by run: the history's columns are read back from its table, as the dbt model does
    ledger = history = None
    for number, batch in enumerate(runs, start=1):
        process = f"run-{number}"
        new = ledger_increment(rows_of([(number, batch)]), ledger, config, process)
        ledger = (new if ledger is None else ledger.unionByName(new)).localCheckpoint()
        changes = history_increment(ledger, history, None, config, HIGH, process)
        history = changes if history is None else merge_versions(history, changes, schema)
        history = history.localCheckpoint()
    assert {f.name: f.dataType.simpleString() for f in history.schema.fields} == types
    columns = [c for c in whole.columns if c not in ("process_id", "row_hash")]
    content = sorted(tuple(map(str, r)) for r in whole.select(*columns).collect())
    assert sorted(tuple(map(str, r)) for r in history.select(*columns).collect()) == content


def test_encoded_arrays_and_approximate_intervals_are_refused_whatever_the_column_type(spark):
    """An array whose schema names an encoded element kind (PostgreSQL's timestamp[]: epoch
    numbers; numeric[]: decimals as bytes; bytea[]: base64) and an interval as MicroDuration (its
    months approximated) hold no database value exactly in any declared type: their events are
    quarantined, on Spark as in the model; an array of plain elements is its JSON text."""
    fields = [
        *BASE_FIELDS,
        {**_schema_field("stamps", "array"), "items": {"type": "int64", "name": MICRO_TS}},
        {**_schema_field("blobs", "array"), "items": {"type": "bytes"}},
        {**_schema_field("nums", "array"), "items": {"type": "int32"}},
        {**_schema_field("labels", "array"), "items": {"type": "string"}},
        _schema_field("period", "int64", "io.debezium.time.MicroDuration"),
    ]
    columns = {"stamps": "string", "blobs": "string", "nums": "string", "labels": "string"}
    schema = TargetSchema({"id": "int", "name": "string", **columns, "period": "bigint"}, ("id",))
    images = [
        {"id": 1, "name": "a", "stamps": [1_767_780_000_123_456]},
        {"id": 2, "name": "b", "blobs": ["3q2+7w=="]},
        {"id": 3, "name": "c", "period": 2_629_800_000_000},  # '1 mon', or 30 days 10:30?
        {"id": 4, "name": "d", "nums": [-1, 0, 7], "labels": ["x", "y"], "stamps": None},
    ]
    batches = [[typed_message(image, fields, 10 + n, n) for n, image in enumerate(images)]]
    rows = [(1, v) for v in batches[0]]
    feed = normalize_debezium(spark.createDataFrame(rows, "_batch_id long, value string"), schema)
    found = _feed_tuples(feed.collect())
    assert found == _model_tuples(feed_events(batches, schema))
    reasons = sorted(str(error) for *_, error in found.elements())
    assert reasons == [
        "None",
        "undecodable:blobs:array of bytes into string",
        "undecodable:period:io.debezium.time.MicroDuration into bigint",
        f"undecodable:stamps:array of {MICRO_TS} into string",
    ]
    plain = next(dict(zip(n, v, strict=True)) for _, _, _, n, v, _, _, e in found if e is None)
    assert (plain["nums"], plain["labels"]) == ("[-1,0,7]", '["x","y"]')
