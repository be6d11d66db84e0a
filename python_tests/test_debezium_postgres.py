"""A real Debezium connector on a real PostgreSQL: what it emits (its default encodings, schemas on
and off, string decimals and ISO times; TOAST placeholders, truncates, key changes, transactions,
REPLICA IDENTITY DEFAULT and FULL), landed as delivery files (and through a real Kafka broker) and
applied (the defaults' orders by `dbt build` of a team project's sources made by `spark-cdc add`,
files and Kafka alike; the other tables by the library's functions); after every delivery the
current rows equal Postgres's own table, value by value, nothing Postgres applied is
quarantined, and at the end each orders history read as of each step's lsn holds what Postgres
held then."""

from __future__ import annotations

import base64
import json
import random
import string
from decimal import Decimal
from pathlib import Path

import pytest
from debezium_dbt import ScaffoldedSource, dbt, write_team_project
from debezium_pipeline import Source, as_of, marker_position
from debezium_support import Capture, debezium_capture, postgres_available, postgres_server
from pyspark.sql import functions as F
from servers import kafka_broker

from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.debezium.types import DebeziumSettings
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import RAW_RECORD
from spark_cdc.change_events.resolve import current_rows

pytestmark = pytest.mark.skipif(
    not postgres_available(), reason="needs Debian's postgresql-15 and a JDK (javac)"
)
# The team project's schemas: its models', and the landing tables'
TEAM, TEAM_LANDING = "t_debezium_postgres_team", "t_debezium_postgres_landing"
DATABASE = "t_debezium_postgres"
TIMESTAMP_TEXT = "YYYY-MM-DD HH24:MI:SS.US"
ORDERS_DDL = """
create table orders (
    region text, order_no bigint, amount numeric(12, 2), rate numeric, placed_at timestamp,
    picked_up_at timestamptz, delivered_on date, slot time, paid boolean, doc jsonb, note text,
    placed_ms timestamp(3), data bytea, nums int[], primary key (region, order_no));
create table parcels (id int primary key, weight numeric(8, 3), note text);
alter table parcels replica identity full;
create table marker (step int primary key);
create extension hstore;
create extension citext;
create table kinds (
    id int primary key, u uuid, m money, ip inet, net cidr, mac macaddr, mac8 macaddr8,
    h hstore, r int4range, r8 int8range, nr numrange, tr tsrange, tzr tstzrange, dr daterange,
    x xml, sm smallint, re real, dp double precision, ch char(3), vc varchar(5), b1 bit(1),
    b3 bit(3), vb varbit(5), tz timetz, uuids uuid[], texts text[], longs bigint[],
    flags boolean[], ci citext, js json, o oid, c1 "char",
    -- no declared type holds these exactly: refused (test below)
    iv interval, stamps timestamp[], nums_any numeric[], amounts numeric(6, 2)[], days date[],
    blobs bytea[]);
"""
# Every other type of Debezium's PostgreSQL type table (defaults, schemas on), declared as
# what holds it exactly, compared with Postgres's own text of it.
KINDS = {
    "id": "int",
    "u": "string",
    "m": "decimal(19,2)",
    "ip": "string",
    "net": "string",
    "mac": "string",
    "mac8": "string",
    "h": "string",
    "r": "string",
    "r8": "string",
    "nr": "string",
    "tr": "string",
    "tzr": "string",
    "dr": "string",
    "x": "string",
    "sm": "smallint",
    "re": "float",
    "dp": "double",
    "ch": "string",
    "vc": "string",
    "b1": "boolean",
    "b3": "int",
    "vb": "bigint",  # its digits' text is padded to the column's length (see the docs)
    "tz": "string",
    "uuids": "string",
    "texts": "string",
    "longs": "string",
    "flags": "string",
    "ci": "string",
    "js": "string",
    "o": "bigint",
    "c1": "string",
}
KINDS_QUERY = """select id, u::text as u, m::numeric::text as m, nullif(format('%s', ip), '') as ip,
    net::text as net, mac::text as mac, mac8::text as mac8, hstore_to_json(h)::text as h,
    r::text as r, r8::text as r8, nr::text as nr, tr::text as tr, tzr::text as tzr,
    dr::text as dr, x::text as x, sm, re, dp, nullif(format('%s', ch), '') as ch, vc,
    b1 = B'1' as b1, b3::int as b3, lpad(vb::text, 5, '0')::bit(5)::int as vb,
    (tz at time zone 'UTC')::time::text || 'Z' as tz,
    array_to_json(uuids)::text as uuids, array_to_json(texts)::text as texts,
    array_to_json(longs)::text as longs, array_to_json(flags)::text as flags, ci::text as ci,
    js::text as js, o::bigint as o, c1::text as c1 from kinds"""
BITS = ("b3", "vb")  # Debezium's Bits: declared as numbers where a schema names them
REFUSED_KINDS = {
    "iv": "io.debezium.time.MicroDuration",
    "stamps": "array of io.debezium.time.MicroTimestamp",
    "nums_any": "array of io.debezium.data.VariableScaleDecimal",
    "amounts": "array of org.apache.kafka.connect.data.Decimal",
    "days": "array of io.debezium.time.Date",
    "blobs": "array of bytes",
}
KINDS_ROW = """(1, 'b1f4c1c0-0000-4000-8000-000000000001', 12.34, '192.168.0.1', '10.0.0.0/8',
    '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', 'a=>1, "b c"=>NULL', '[1,10)', '[5,)',
    '(1.5,2.25]', '[2026-01-07 10:00,2026-01-08 00:00)', '[2026-01-07 10:00+01,)',
    '[2026-01-01,2026-02-01)', '<a>x</a>', -32768, 1.5, 0.1, 'ab', 'hello', B'1', B'101',
    B'10110', '10:00:00.123456+02', '{b1f4c1c0-0000-4000-8000-000000000001}',
    '{"a", "b,c", NULL}', '{9007199254740993}', '{true, null}', 'MiXed', '{"k": [1, 2.50]}',
    42, 'x', null, null, null, null, null, null)"""
ORDERS = {
    "region": "string",
    "order_no": "bigint",
    "amount": "decimal(12,2)",
    "rate": "decimal(20,6)",
    "placed_at": "timestamp",
    "picked_up_at": "timestamp",
    "delivered_on": "date",
    "slot": "string",
    "paid": "boolean",
    "doc": "string",
    "note": "string",
    "placed_ms": "timestamp",
    "data": "binary",
    "nums": "string",
}
PARCELS = {"id": "int", "weight": "decimal(8,3)", "note": "string"}
DECIMALS = {"amount", "rate", "weight", "m"}
JSONS = {"h"}  # compared as JSON: Postgres's text of an hstore spaces it otherwise


def long_bytes(seed: int) -> str:
    """About 12 kB of random bytes as a bytea literal: stored out of line (TOAST)."""
    return "\\x" + random.Random(seed).randbytes(12_000).hex()


def long_text(seed: int) -> str:
    """About 12 kB that Postgres cannot compress: stored out of line (TOAST)."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12_000))


def orders_query(slot: str) -> str:
    """Postgres's own text of every orders column, in the shape the comparison reads."""
    return f"""select region, order_no, amount::text as amount, rate::text as rate,
        to_char(placed_at, '{TIMESTAMP_TEXT}') as placed_at,
        to_char(picked_up_at at time zone 'UTC', '{TIMESTAMP_TEXT}') as picked_up_at,
        delivered_on::text as delivered_on, {slot} as slot, paid, doc::text as doc, note,
        to_char(placed_ms, '{TIMESTAMP_TEXT}') as placed_ms,
        replace(encode(data, 'base64'), chr(10), '') as data,
        array_to_json(nums)::text as nums
        from orders"""


SLOT_AS_TIME = "to_char(slot, 'HH24:MI:SS.US')"
# Without a schema a time column (a string in Spark) keeps the number sent: µs since midnight.
SLOT_AS_MICROS = "(extract(epoch from slot) * 1000000)::bigint::text"
STEPS = [
    f"""
    insert into orders values
      ('eu', 1, 10.50, 3, '2026-01-07 10:00:00.123456', '2026-01-07 11:00:00+01',
       '2026-01-07', '10:00:00.123456', true, '{{"a": 1}}', 'first'),
      ('us', 2, -99999.99, -0.000001, '1999-12-31 23:59:59', null, '1970-01-01', '00:00:00',
       false, null, 'second'),
      ('eu', 3, 0, null, null, null, null, null, null, null, '{long_text(3)}');
    insert into parcels values (1, 1.5, 'light'), (2, -0.001, '{long_text(2)}');
    update orders set placed_ms = '2026-01-07 10:00:00.123', data = '\\xdeadbeef'
        where region = 'eu' and order_no = 1;
    update orders set placed_ms = '1899-12-31 23:59:59.999', data = '{long_bytes(3)}',
        nums = array(select ((i * 2654435761) % 1000000007)::int
                     from generate_series(1, 5000) i)
        where region = 'eu' and order_no = 3;
    update orders set nums = '{{-1, 0, 7}}' where region = 'eu' and order_no = 1;
    insert into kinds values {KINDS_ROW};
    insert into kinds (id) values (2);
    """,
    f"""
    insert into orders values
      ('eu', 10, -0.05, 1.234, '1969-12-31 23:59:59.5', '2026-01-07 12:30:00+02:30',
       '1900-02-28', '23:59:59.999999', null, '{{"a": [1, 2]}}', '{long_text(10)}'),
      ('us', 11, null, null, null, null, null, null, null, null, null);
    begin;
    update orders set amount = amount + 1 where region = 'eu' and order_no = 1;
    update orders set amount = amount * 2, paid = false where region = 'eu' and order_no = 1;
    commit;
    begin;
    insert into orders (region, order_no, amount) values ('apac', 12, 1);
    delete from orders where region = 'apac' and order_no = 12;
    commit;
    insert into parcels values (3, 12345.678, '{long_text(30)}');
    update kinds set h = hstore('k', '{long_text(41)}'), x = '<a>{long_text(42)}</a>',
        js = '{{"k": "{long_text(43)}"}}', texts = array['{long_text(44)}', 'b'] where id = 1;
    update kinds set iv = '1 year 2 mons 3 days 04:05:06.78', stamps = '{{"2026-01-07 10:00"}}',
        nums_any = '{{1.5, -2}}', amounts = '{{1.50}}', days = '{{2026-01-07}}',
        blobs = '{{"\\\\xdead"}}' where id = 2;
    update kinds set iv = null, stamps = null, nums_any = null, amounts = null, days = null,
        blobs = null where id = 2;
    update parcels set weight = 2.25 where id = 1;
    """,
    """
    update orders set amount = 123.45 where region = 'eu' and order_no = 10;
    update orders set amount = -1 where region = 'eu' and order_no = 3;
    update orders set order_no = 20 where region = 'us' and order_no = 2;
    delete from orders where region = 'us' and order_no = 11;
    update parcels set weight = 3.5 where id = 3;
    delete from parcels where id = 2;
    update orders set order_no = 21 where region = 'eu' and order_no = 10;
    update parcels set id = 4 where id = 3;
    update kinds set m = -0.01, sm = 32767, re = -0.25, b3 = B'010', vb = B'1',
        tz = '23:59:59-01', ch = 'xyz', o = 4294967295 where id = 1;
    update kinds set u = 'b1f4c1c0-0000-4000-8000-000000000002', ip = '::1', b1 = B'0',
        h = '"x"=>"y"', texts = '{}' where id = 2;
    """,
    """
    truncate orders;
    insert into orders (region, order_no, amount, note) values ('eu', 30, 1.00, 'after');
    update parcels set weight = weight + 1;
    """,
]


def _text(value, column: str):
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if column in DECIMALS:
        return Decimal(value)
    if column in JSONS:
        return json.loads(value)
    if hasattr(value, "hour") and hasattr(value, "microsecond"):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def current(source: Source | ScaffoldedSource) -> list[dict]:
    """The current rows: a team source's current table, or (the library's route) the current
    rows of its history."""
    if isinstance(source, ScaffoldedSource):
        rows = source.table("current").collect()
    else:
        rows = current_rows(source.history, source.schema).collect()
    found = [{c: _text(row[c], c) for c in source.schema.columns} for row in rows]
    return sorted(found, key=lambda row: tuple(str(row[k]) for k in source.schema.keys))


def postgres_rows(postgres, query: str, schema: TargetSchema) -> list[dict]:
    rows = postgres.rows(query)
    found = [{c: _text(row[c], c) for c in schema.columns} for row in rows]
    return sorted(found, key=lambda row: tuple(str(row[k]) for k in schema.keys))


# Which tables each capture delivers after which steps: every step for the connector's defaults
# with schemas on (incremental runs on top of earlier ones); once, after the truncate, for the
# others, whose one delivery then spans every step (each pipeline run costs about half a minute
# of the suite's time, and what they add is their encodings, not incremental runs).
DELIVERIES = {
    ("defaults", "orders"): {0, 1, 2, 3},
    ("defaults", "parcels"): {1, 3},
    ("schemaless", "orders"): {3},
    ("schemaless", "parcels"): set(),
    ("strings_iso", "orders"): {3},
    ("strings_iso", "parcels"): set(),
    # the defaults capture's records through a real broker and the project's Kafka landing
    ("kafka", "orders"): {1, 3},
    ("kafka", "parcels"): set(),
    ("defaults", "kinds"): {1, 3},
    ("schemaless", "kinds"): {3},
}
CAPTURES = {
    # name: connector settings, the source's debezium settings, the orders' slot text
    "defaults": ({"converter.schemas.enable": "true"}, {}, SLOT_AS_TIME),
    # without a schema the unit of a timestamp's epoch number is named per column
    "schemaless": (
        {"converter.schemas.enable": "false"},
        {
            "column.logical.types": {
                "placed_at": "io.debezium.time.MicroTimestamp",
                "placed_ms": "io.debezium.time.Timestamp",
            }
        },
        SLOT_AS_MICROS,
    ),
    "strings_iso": (
        {
            "converter.schemas.enable": "false",
            "decimal.handling.mode": "string",
            "time.precision.mode": "isostring",
        },
        {"decimal.handling.mode": "string", "time.precision.mode": "isostring"},
        None,
    ),
}


def test_a_real_connector_on_postgres_applies_exactly(spark, tmp_path: Path):
    spark.sql(f"create database if not exists {DATABASE}")
    for schema in (TEAM, TEAM_LANDING):
        spark.sql(f"drop schema if exists {schema} cascade")
    (tmp_path / "kafka").mkdir()
    team = write_team_project(tmp_path / "team", "team_parcels", TEAM)
    with postgres_server() as postgres, kafka_broker(tmp_path / "kafka") as broker:
        postgres.sql(ORDERS_DDL + STEPS[0])
        captures, sources = {}, {}
        with (
            debezium_capture(
                postgres, "defaults", _tables(), CAPTURES["defaults"][0], tmp_path, broker
            ) as defaults,
            debezium_capture(
                postgres, "schemaless", _tables(), CAPTURES["schemaless"][0], tmp_path
            ) as schemaless,
            debezium_capture(
                postgres, "strings_iso", _tables(), CAPTURES["strings_iso"][0], tmp_path
            ) as strings_iso,
        ):
            captures = {"defaults": defaults, "schemaless": schemaless, "strings_iso": strings_iso}
            for name, (_, settings, slot) in CAPTURES.items():
                debezium = DebeziumSettings.from_mapping(settings)
                orders = {c: t for c, t in ORDERS.items() if slot is not None or c != "slot"}
                if name != "defaults":  # the defaults' orders: the team's source below
                    sources[name, "orders"] = Source(
                        "orders",
                        TargetSchema(orders, ("region", "order_no")),
                        debezium,
                        f"{DATABASE}.orders_{name}",
                    )
                # without a schema a Bits value is its bytes: nothing says they are bits
                kinds = {c: t for c, t in KINDS.items() if name != "schemaless" or c not in BITS}
                sources[name, "kinds"] = Source(
                    "kinds",
                    TargetSchema(kinds, ("id",)),
                    debezium,
                    f"{DATABASE}.kinds_{name}",
                )
                sources[name, "parcels"] = Source(
                    "parcels",
                    TargetSchema(PARCELS, ("id",)),
                    debezium,
                    f"{DATABASE}.parcels_{name}",
                )
            # the connector's defaults, files and Kafka: a team's sources made by `spark-cdc
            # add` and built by `dbt build`
            for name in ("defaults", "kafka"):
                kafka = (broker, tmp_path / "kafka_checkpoint") if name == "kafka" else None
                sources[name, "orders"] = ScaffoldedSource.added(
                    team, f"orders_{name}", TargetSchema(ORDERS, ("region", "order_no")), TEAM,
                    TEAM_LANDING, kafka=kafka,
                )  # fmt: skip
            dbt(team, "deps")
            captures["kafka"] = defaults
            held: dict[str, list] = {name: [] for name in captures}  # orders after each step
            for step, statements in enumerate(STEPS):
                if step:
                    postgres.sql(statements)
                postgres.sql(f"insert into marker values ({step});")
                for capture in captures.values():
                    capture.wait_for(f"{capture.out.name}.public.marker", f'"step":{step}')
                for name, capture in captures.items():
                    slot = CAPTURES[capture.out.name][2]
                    marker = f"{capture.out.name}.public.marker"
                    rows = postgres_rows(
                        postgres, orders_query(slot or "null"), sources[name, "orders"].schema
                    )
                    held[name].append((marker_position(capture, marker, step), rows))
                    for table in ("orders", "parcels", "kinds"):
                        if step not in DELIVERIES.get((name, table), ()):
                            continue
                        source = sources[name, table]
                        files = source.deliver(spark, capture, f"{capture.out.name}.public.{table}")
                        query = {
                            "orders": orders_query(slot or "null"),
                            "parcels": _parcels_query(),
                            "kinds": _kinds_query(source.schema),
                        }[table]
                        expected = postgres_rows(postgres, query, source.schema)
                        assert current(source) == expected, (name, table, step, files)
                        problems = source.ledger.where(F.col("status").isin("quarantined")).select(
                            "quarantine_reason", RAW_RECORD
                        )
                        assert problems.collect() == [], (name, table, step)
        built = [sources[name, "orders"].builds for name in ("defaults", "kafka")]
        assert built == [len(DELIVERIES[name, "orders"]) for name in ("defaults", "kafka")]
        _check_encodings(captures, sources)
        _check_refused_kinds(spark, captures["defaults"])
        _check_toasted_kinds(captures["defaults"])
        # each orders history, read as of each step's marker (its lsn follows every change of
        # the step), holds what Postgres held then: also for the captures delivered once
        for name, steps in held.items():
            source = sources[name, "orders"]
            for step, (position, expected) in enumerate(steps):
                found = as_of(source, position, list(source.schema.columns), _text)
                assert found == expected, (name, step)


def _tables() -> list[str]:
    return ["public.orders", "public.parcels", "public.kinds", "public.marker"]


def _parcels_query() -> str:
    return "select id, weight::text as weight, note from parcels"


def _check_encodings(captures: dict[str, Capture], sources: dict) -> None:
    """What the connector sent is what the test meant to feed: schemas where asked for, bytes
    for decimals by default, placeholders for unchanged TOAST values, a truncate, tombstones."""
    defaults = "".join(p.read_text() for p in captures["defaults"].files("defaults.public.orders"))
    schemaless = "".join(
        p.read_text() for p in captures["schemaless"].files("schemaless.public.orders")
    )
    assert '"name":"org.apache.kafka.connect.data.Decimal"' in defaults
    assert '"io.debezium.time.MicroTimestamp"' in defaults
    assert not schemaless.startswith('{"schema"')
    assert "__debezium_unavailable_value" in defaults
    # an unchanged TOASTed int[]: the placeholder's bytes as numbers
    assert "[" + ",".join(str(b) for b in b"__debezium_unavailable_value") + "]" in defaults
    lines = defaults.splitlines()
    assert any('"op":"t"' in line for line in lines) and "null" in lines
    ledger = sources["defaults", "orders"].ledger
    statuses = {row["status"]: row["count"] for row in ledger.groupBy("status").count().collect()}
    assert statuses["skipped"] == lines.count("null") == 4  # two deletes and two key changes
    # through Kafka a tombstone is a record without a value: landed, counted the same
    ledger = sources["kafka", "orders"].ledger
    by_kafka = {row["status"]: row["count"] for row in ledger.groupBy("status").count().collect()}
    assert by_kafka == statuses
    history = sources["defaults", "orders"].history
    truncated = history.where(F.col("change_type") == "truncate").count()
    assert truncated == 4  # eu/1, eu/3, eu/21 and us/20 were live at the truncate
    moved_in = [line for line in lines if '"order_no":21' in line and '"op":"c"' in line]
    assert len(moved_in) == 1 and "__debezium_unavailable_value" in moved_in[0]
    # the TOASTed note of eu/10 left unchanged by its key change (a placeholder) took eu/10's
    moved = history.where("region = 'eu' and order_no = 21 and not is_deleted").collect()
    assert [row["note"] for row in moved] == [long_text(10)]


def _kinds_query(schema: TargetSchema) -> str:
    """KINDS_QUERY of the columns ``schema`` declares."""
    return f"select {', '.join(schema.columns)} from ({KINDS_QUERY}) k"


def _check_toasted_kinds(capture: Capture) -> None:
    """The update of kinds 1 that leaves its TOASTed hstore, xml, json and text[] alone sent
    each as Debezium's placeholder (the current rows kept their values: compared above)."""
    updates = [
        json.loads(line)["payload"]["after"]
        for path in capture.files("defaults.public.kinds")
        for line in path.read_text().splitlines()
        if line != "null" and '"op":"u"' in line
    ]
    left = [after for after in updates if after["id"] == 1 and after["sm"] == 32767]
    assert len(left) == 1
    placeholder = "__debezium_unavailable_value"
    assert left[0]["x"] == left[0]["js"] == placeholder
    assert json.loads(left[0]["h"]) == {placeholder: placeholder}  # an hstore as JSON text
    assert left[0]["texts"] == [placeholder]


def _check_refused_kinds(spark, capture: Capture) -> None:
    """An interval (MicroDuration: months approximated) and arrays of encoded elements, declared
    as text, quarantine their events, each naming its column and kind; the events where they
    are NULL apply."""
    lines = [
        line
        for path in capture.files("defaults.public.kinds")
        for line in path.read_text().splitlines()
        if line != "null"
    ]
    declared = {"id": "int", **dict.fromkeys(REFUSED_KINDS, "string")}
    frame = spark.createDataFrame([(1, line) for line in lines], "_batch_id long, value string")
    feed = normalize_debezium(frame, TargetSchema(declared, ("id",)))
    errors = sorted(str(row["_landing_error"]) for row in feed.collect())
    first = next(iter(REFUSED_KINDS))  # the first refused column names the event's reason
    assert f"undecodable:{first}:{REFUSED_KINDS[first]} into string" in errors
    for column, kind in REFUSED_KINDS.items():
        only = normalize_debezium(frame, TargetSchema({"id": "int", column: "string"}, ("id",)))
        reasons = {row["_landing_error"] for row in only.collect()}
        assert reasons == {None, f"undecodable:{column}:{kind} into string"}, column
