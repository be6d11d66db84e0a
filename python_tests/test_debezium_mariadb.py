"""A real Debezium MariaDB connector on a real MariaDB (Debian's package): what it emits on its
defaults (schemas on; binlog positions, whole-second ts_ms) for every type its documentation
lists that Spark can hold, same-second transactions, key changes, a column added mid-stream and
a truncate, landed as delivery files (and through a real Kafka broker) and applied by `dbt
build` of a team project's sources made by `spark-cdc add` (the composite-key table by the
library's functions); after every delivery the current rows equal MariaDB's own, value by value
and type (the added columns typed by the connector's schema), nothing MariaDB applied is
quarantined, and at the end the history read as of each delivery's binlog position holds what
MariaDB held then."""

from __future__ import annotations

import base64
from decimal import Decimal
from pathlib import Path

import pytest
from debezium_dbt import ScaffoldedSource, dbt, write_team_project
from debezium_pipeline import Source, as_of, marker_position
from debezium_support import mariadb_available, mariadb_capture, mariadb_server
from pyspark.sql import functions as F
from servers import kafka_broker

from spark_cdc.change_events.debezium.types import DebeziumSettings
from spark_cdc.change_events.evolution import columns_in
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import RAW_RECORD
from spark_cdc.change_events.resolve import current_rows

pytestmark = pytest.mark.skipif(
    not mariadb_available(), reason="needs Debian's mariadb-server and a JDK (javac)"
)
DATABASE = "t_debezium_mariadb"
# The team project's schemas: its models', and the landing tables'
TEAM, TEAM_LANDING = "t_debezium_mariadb_team", "t_debezium_mariadb_landing"
DDL = """
create table orders (
    id bigint unsigned primary key, amount decimal(12,2), placed_at datetime(3),
    stamped_at timestamp(6) null default null, due_on date, pickup time(6), built year,
    flag tinyint(1), bits bit(4), size enum('s','m','l'), tags set('a','b','c'), doc json,
    data blob, note text);
create table order_lines (order_id int, line_no int, qty int, primary key (order_id, line_no));
create table marker (step int primary key);
"""
ORDERS = {
    "id": "bigint",
    "amount": "decimal(12,2)",
    "placed_at": "timestamp",
    "stamped_at": "timestamp",
    "due_on": "date",
    "pickup": "string",
    "built": "int",
    "flag": "smallint",
    "bits": "string",
    "size": "string",
    "tags": "string",
    "doc": "string",
    "data": "binary",
    "note": "string",
}
LINES = {"order_id": "int", "line_no": "int", "qty": "int"}
# MariaDB's own text of every orders column, in the shape the comparison reads (the columns the
# ALTER adds: their text when the source has discovered them).
ORDERS_QUERY = """
    'id', id, 'amount', cast(amount as char), 'placed_at',
    date_format(placed_at, '%Y-%m-%d %H:%i:%s.%f'),
    'stamped_at', date_format(stamped_at, '%Y-%m-%d %H:%i:%s.%f'),
    'due_on', cast(due_on as char), 'pickup', cast(pickup as char), 'built', built,
    'flag', flag, 'bits', lpad(bin(bits), 4, '0'), 'size', size, 'tags', tags,
    'doc', cast(doc as char),
    'data', replace(to_base64(data), '\\n', ''), 'note', note{added}
) order by id) from orders
"""
DECIMALS = ("amount", "discount")
# After which steps the Kafka route takes in what the broker holds.
KAFKA_DELIVERIES = (1, 3)
# The types the source's discovered columns take from the connector's schema.
ADDED_TYPES = {"discount": "decimal(6,2)", "seen_at": "timestamp"}
ADDED = """, 'discount', cast(discount as char),
    'seen_at', date_format(seen_at, '%Y-%m-%d %H:%i:%s.%f')"""
STEPS = [
    # before the capture: its snapshot (op r)
    """
    insert into orders values
      (1, 10.50, '2026-01-07 10:00:00.123', '2026-01-07 11:00:00.654321', '2026-01-07',
       '838:59:59', 2026, 1, b'1010', 'm', 'a,c', '{"a": [1, 2]}', x'deadbeef', 'first'),
      (2, -99999.99, '1000-01-01 00:00:00', null, '9999-12-31', '-12:30:00.5', 1901, 0,
       b'0000', 's', '', null, x'', 'second'),
      (3, null, null, null, null, null, null, null, null, null, null, null, null, null);
    insert into order_lines values (1, 1, 5), (1, 2, 7);
    """,
    # same-second transactions: three updates of one row; an insert and a delete of one key;
    # a key change then an update of the new key; a composite key change
    """
    begin;
    update orders set amount = 1 where id = 1;
    update orders set amount = 2, note = 'two' where id = 1;
    update orders set amount = 3.25 where id = 1;
    commit;
    insert into orders (id, amount) values (4, 4);
    delete from orders where id = 4;
    begin;
    update orders set id = 5 where id = 2;
    update orders set amount = 55.55, pickup = '-00:00:01' where id = 5;
    commit;
    update order_lines set line_no = 3 where order_id = 1 and line_no = 2;
    update orders set bits = b'0101', tags = 'b', size = 'l', data = x'00ff' where id = 3;
    """,
    # a column added mid-stream, set on some rows
    """
    alter table orders add column discount decimal(6,2) default 0,
        add column seen_at datetime(6) null;
    update orders set discount = -5.50, seen_at = '2026-01-08 09:00:00.123456' where id = 1;
    update orders set discount = 1.25 where id = 5;
    -- every live row changes after the ALTER: an untouched row's new column stays NULL here
    -- where MariaDB shows its default (docs/change-events.md)
    update orders set note = 'three' where id = 3;
    insert into orders (id, amount, discount) values (6, 6, 0.5);
    """,
    # a truncate, then life goes on
    """
    truncate table orders;
    insert into orders (id, amount, note, discount) values (7, 7.7, 'after', -0.01);
    delete from order_lines where order_id = 1 and line_no = 1;
    """,
]


def _text(value, column: str):
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if column in DECIMALS:
        return Decimal(str(value))
    if hasattr(value, "hour") and hasattr(value, "microsecond"):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _sorted(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    return sorted(rows, key=lambda row: tuple(str(row[k]) for k in keys))


def current(source: Source | ScaffoldedSource, columns: list[str]) -> list[dict]:
    """The current rows: a team source's current table, or (the library's route) the current
    rows of its history with the columns it discovered, as the current model takes them."""
    if isinstance(source, ScaffoldedSource):
        rows = source.table("current").collect()
    else:
        schema = columns_in(source.schema, source.history.schema)
        rows = current_rows(source.history, schema).collect()
    found = [{c: _text(row.asDict().get(c), c) for c in columns} for row in rows]
    return _sorted(found, source.schema.keys)


def mariadb_orders(server, step: int) -> list[dict]:
    query = "select json_arrayagg(json_object(" + ORDERS_QUERY.format(
        added=ADDED if step >= 2 else ""
    )
    rows = server.rows_of(query)
    columns = [*ORDERS, *(["discount", "seen_at"] if step >= 2 else [])]
    for row in rows:
        for column in DECIMALS:
            if row.get(column) is not None:
                row[column] = Decimal(row[column])
    return _sorted([{c: row.get(c) for c in columns} for row in rows], ("id",))


def test_a_real_mariadb_connector_applies_exactly_in_binlog_order(spark, tmp_path: Path):
    spark.sql(f"create database if not exists {DATABASE}")
    for schema in (TEAM, TEAM_LANDING):
        spark.sql(f"drop schema if exists {schema} cascade")
    (tmp_path / "kafka").mkdir()
    team = write_team_project(tmp_path / "team", "team_shop", TEAM)
    with mariadb_server() as server, kafka_broker(tmp_path / "kafka") as broker:
        server.sql(DDL + STEPS[0])
        with mariadb_capture(
            server, "maria", {"converter.schemas.enable": "true"}, tmp_path, broker
        ) as cap:
            settings = DebeziumSettings.from_mapping({})
            # the team's sources, made by `spark-cdc add` and built by `dbt build`: the
            # capture's files, and the same records through a real broker and
            # `land-change-events --kafka-...`, taken in after the same-second transactions and
            # after the truncate
            orders = ScaffoldedSource.added(
                team, "orders", TargetSchema(ORDERS, ("id",)), TEAM, TEAM_LANDING,
                "--evolve-columns",
            )  # fmt: skip
            by_kafka = ScaffoldedSource.added(
                team, "orders_kafka", TargetSchema(ORDERS, ("id",)), TEAM, TEAM_LANDING,
                "--evolve-columns", kafka=(broker, tmp_path / "kafka_checkpoint"),
            )  # fmt: skip
            dbt(team, "deps")
            # the composite key, by the library's functions as the models call them
            lines = Source(
                "lines", TargetSchema(LINES, ("order_id", "line_no")), settings, f"{DATABASE}.lines"
            )
            snapshots = []
            for step, statements in enumerate(STEPS):
                if step:
                    server.sql(statements)
                server.sql(f"insert into marker values ({step});")
                cap.wait_for("maria.shop.marker", f'"step":{step}')
                files = orders.deliver(spark, cap, "maria.shop.orders")
                expected = mariadb_orders(server, step)
                snapshots.append((marker_position(cap, "maria.shop.marker", step), expected))
                assert current(orders, list(expected[0]) if expected else []) == expected, (
                    step,
                    files,
                )
                if step >= 2:
                    types = {f.name: f.dataType.simpleString() for f in orders.history.schema}
                    assert {c: types[c] for c in ADDED_TYPES} == ADDED_TYPES
                if step in KAFKA_DELIVERIES:
                    by_kafka.deliver(spark, cap, "maria.shop.orders")
                    found = current(by_kafka, list(expected[0]) if expected else [])
                    assert found == expected, ("kafka", step)
                lines.deliver(spark, cap, "maria.shop.order_lines")
                found_lines = current(lines, list(LINES))
                assert found_lines == _sorted(
                    server.rows_of(
                        "select json_arrayagg(json_object('order_id', order_id, 'line_no', "
                        "line_no, 'qty', qty)) from order_lines"
                    ),
                    ("order_id", "line_no"),
                ), step
                for source in (orders, lines, by_kafka):
                    if source.ledger is None:  # not taken in yet
                        continue
                    problems = source.ledger.where(F.col("status") == "quarantined").select(
                        "quarantine_reason", RAW_RECORD
                    )
                    assert problems.collect() == [], (source.landed, step)
        assert (orders.builds, by_kafka.builds) == (len(STEPS), len(KAFKA_DELIVERIES))
        _check_what_was_sent(cap, orders)
        # the history, read as of each step's marker (a later binlog position than every change
        # of that step), holds the rows MariaDB held then
        for step, (position, expected) in enumerate(snapshots):
            for source in (orders, by_kafka):
                found = as_of(source, position, list(expected[0]) if expected else [], _text)
                assert found == expected, (source.landed, step)


def _check_what_was_sent(capture, orders: ScaffoldedSource) -> None:
    """What the connector sent is what the test meant to feed: whole-second ts_ms shared by
    changes of one key (only the binlog position orders them), key changes as a delete and a
    create at one position, a truncate."""
    text = "".join(path.read_text() for path in capture.files("maria.shop.orders"))
    assert '"connector":"mariadb"' in text and '"op":"t"' in text
    ledger = orders.ledger
    applied = ledger.where("status = 'applied' and event_position is not null")
    tied = applied.groupBy("event_ts", F.col("image.id").alias("id")).count().where("count > 1")
    assert tied.count() > 0  # changes of one key in one second
    history = orders.history
    assert history.where("is_ambiguous").count() == 0
    # the key change 2 -> 5 is one update: created_at followed the row
    moved = history.where("id = 5 and not is_deleted").select("created_at").distinct().collect()
    first = history.where("id = 2 and not is_deleted").select("created_at").distinct().collect()
    assert moved == first
