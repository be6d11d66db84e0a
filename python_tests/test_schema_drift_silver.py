"""Silver refreshes without dbt: a refresh that failed before its log rows were written is
repeated by the next one, which logs and writes exactly what an uninterrupted refresh would."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.registry import registry_increment
from spark_cdc.schema_drift.silver import (
    METADATA_COLUMNS,
    checkpoint_interval,
    drop_started_rows,
    refresh_silver,
    write_guard,
)
from spark_cdc.schema_drift.stream import FeedTables, _refresh_silver

# The feed's bronze as its dbt model names it (the stream's refresh reads its table id).
BRONZE = FeedTables("db", "f", "s__").bronze.split(".")[1]
RAW = "payload string, source_file string, batch_id string, file_modified_at timestamp_ntz"
LOADS = [
    ['{"event_type":"click","x":1}', '{"event_type":"click","x":2}', '{"event_type":"buy","n":1}'],
    # click gains a column, buy's n widens to double, view is a new event type
    [
        '{"event_type":"click","x":3,"y":"new"}',
        '{"event_type":"buy","n":2.5}',
        '{"event_type":"view","page":"a"}',
    ],
    ['{"event_type":"click","x":4}', '{"event_type":"view","page":"b"}'],
    # buy again, so that a rebuild through load 4 holds more than one through load 2
    ['{"event_type":"buy","n":7}', '{"event_type":"view","page":"c"}'],
]
# (event type, write mode, from load, to load, events written, columns, added columns)
EXPECTED_LOG = [
    ("buy", "create", 1, 1, 1, 2, ["event_type", "n"]),
    ("buy", "rebuild", 1, 2, 2, 2, []),
    ("click", "append", 2, 2, 1, 3, ["y"]),
    ("click", "append", 3, 3, 1, 3, []),
    ("click", "create", 1, 1, 2, 2, ["event_type", "x"]),
    ("view", "append", 3, 3, 1, 2, []),
    ("view", "create", 2, 2, 1, 2, ["event_type", "page"]),
]


def _land(spark, db: str, seq: int) -> None:
    name = f"f{seq}"
    raw = spark.createDataFrame(
        [(line, name, name, datetime(2026, 1, 1)) for line in LOADS[seq - 1]], RAW
    )
    bronze, registry = f"{db}.{BRONZE}", f"{db}.registry"
    existing = spark.table(bronze) if spark.catalog.tableExists(bronze) else None
    bronze_increment(raw, existing, name).write.format("delta").mode("append").saveAsTable(bronze)
    prior = spark.table(registry).localCheckpoint() if spark.catalog.tableExists(registry) else None
    rows = registry_increment(spark, spark.table(bronze), prior, name, METADATA_COLUMNS)
    merged = (
        rows if prior is None else prior.join(rows, ["event_type", "variation_hash"], "left_anti")
    )
    table = merged if prior is None else merged.unionByName(rows)
    table.localCheckpoint().write.format("delta").mode("overwrite").saveAsTable(registry)


def _refresh(spark, db: str, full: bool = False, guarded: bool = True):
    """One refresh (``full``: as dbt's --full-refresh, without the log so far; ``guarded``: as
    the stream and the dbt model write, with Delta's idempotent-write guard); returns its log
    rows (not yet appended to the log)."""
    log = f"{db}.loads"
    prior = spark.table(log) if spark.catalog.tableExists(log) and not full else None
    bronze, registry = spark.table(f"{db}.{BRONZE}"), spark.table(f"{db}.registry")
    guard = write_guard(spark, f"{db}.{BRONZE}") if guarded else None
    refresh = refresh_silver(spark, bronze, registry, prior, db, "s__", "t", guard=guard)
    return refresh.localCheckpoint()


def _logged(spark, db: str, rows) -> None:
    rows.write.format("delta").mode("append").saveAsTable(f"{db}.loads")


def _log(spark, db: str, table: str | None = None) -> list[tuple]:
    return sorted(
        (
            r.event_type,
            r.write_mode,
            r.from_load_seq,
            r.to_load_seq,
            r.events_written,
            r.column_count,
            r.added_columns,
        )
        for r in spark.table(table or f"{db}.loads").collect()
    )


def _silver(spark, db: str) -> dict[str, list[tuple]]:
    out = {}
    for table in spark.catalog.listTables(db):
        if table.name.startswith("s__"):
            frame = spark.table(f"{db}.{table.name}").drop("_ingested_at")
            out[table.name] = sorted(tuple(map(repr, r)) for r in frame.collect())
    return out


@pytest.fixture
def databases(spark):
    names = ("silver_refresh_whole", "silver_refresh_failed")
    for db in names:
        spark.sql(f"drop database if exists {db} cascade")
        spark.sql(f"create database {db}")
    yield names
    for db in names:
        spark.sql(f"drop database if exists {db} cascade")


def test_a_failed_refresh_is_repeated_as_if_it_never_ran(spark, databases):
    whole, failed = databases
    for db in databases:
        _land(spark, db, 1)
        _logged(spark, db, _refresh(spark, db))
        _land(spark, db, 2)
    _logged(spark, whole, _refresh(spark, whole))

    # The failed refresh wrote click's table, then died before buy's rebuild and view's create:
    # its log rows are never appended.
    bronze = spark.table(f"{failed}.{BRONZE}").where("event_type = 'click'")
    log, registry = spark.table(f"{failed}.loads"), spark.table(f"{failed}.registry")
    guard = write_guard(spark, f"{failed}.{BRONZE}")
    refresh_silver(spark, bronze, registry, log, failed, "s__", "t", guard=guard).collect()
    assert spark.table(f"{failed}.s__click").count() == 3
    assert not spark.catalog.tableExists(f"{failed}.s__view")
    assert spark.table(f"{failed}.s__buy").schema["n"].dataType.simpleString() == "bigint"

    _logged(spark, failed, _refresh(spark, failed))
    for db in databases:
        _land(spark, db, 3)
        _logged(spark, db, _refresh(spark, db))

    assert _log(spark, whole) == EXPECTED_LOG
    assert _log(spark, failed) == EXPECTED_LOG
    assert _silver(spark, failed) == _silver(spark, whole)
    clicks = sorted((r.x, r.y, r._load_seq) for r in spark.table(f"{failed}.s__click").collect())
    assert clicks == [(1, None, 1), (2, None, 1), (3, "new", 2), (4, None, 3)]
    assert sorted(r.n for r in spark.table(f"{failed}.s__buy").collect()) == [1.0, 2.5]
    # Tables created (click, view) and rebuilt (buy) carry a checkpoint interval of their own.
    for name in ("s__buy", "s__click", "s__view"):
        properties = spark.sql(f"show tblproperties {whole}.{name}").collect()
        interval = {r.key: r.value for r in properties}.get("delta.checkpointInterval")
        assert interval == str(checkpoint_interval(f"{whole}.{name}"))


def test_a_failed_full_refresh_is_followed_by_a_refresh_as_if_it_never_ran(spark, databases):
    """A full refresh killed after rebuilding the tables leaves the log as it was (dbt replaces
    it only when the model completes): the next refresh must not append on top of the rebuilt
    rows."""
    whole, failed = databases
    for db in databases:
        for day in (1, 2):
            _land(spark, db, day)
            _logged(spark, db, _refresh(spark, db))
        _land(spark, db, 3)
    _refresh(spark, failed, full=True)  # its log never replaces the old one
    for db in databases:
        _logged(spark, db, _refresh(spark, db))
    assert _log(spark, failed) == _log(spark, whole)
    # The same rows (a rebuilt table orders its columns by the superset, an appended one adds
    # new columns last: compared by name).
    assert _silver_by_name(spark, failed) == _silver_by_name(spark, whole)
    assert spark.table(f"{failed}.s__click").count() == 4


def _silver_by_name(spark, db: str) -> dict[str, list[tuple]]:
    out = {}
    for table in spark.catalog.listTables(db):
        if table.name.startswith("s__"):
            frame = spark.table(f"{db}.{table.name}").drop("_ingested_at")
            out[table.name] = sorted(
                tuple(sorted((k, repr(v)) for k, v in r.asDict().items())) for r in frame.collect()
            )
    return out


def test_a_second_writer_that_read_the_log_before_the_first_logged_adds_no_row(spark, databases):
    """Two refreshes from the same log (the stream beside a build, or a build after an empty
    bronze load, each reading the log before the other appended to it): the second replaces
    the rows of the loads it writes instead of adding them again, and leaves alone a later load
    that only the first one wrote."""
    whole, db = databases
    for name in databases:
        _land(spark, name, 1)
        _logged(spark, name, _refresh(spark, name))
        _land(spark, name, 2)
    _logged(spark, whole, _refresh(spark, whole))
    stale = spark.table(f"{db}.loads").localCheckpoint()  # the log before the first's rows
    first = _refresh(spark, db)
    _logged(spark, db, first)
    bronze, registry = spark.table(f"{db}.{BRONZE}"), spark.table(f"{db}.registry")
    second = refresh_silver(spark, bronze, registry, stale, db, "s__", "t2").localCheckpoint()
    assert sorted((r.event_type, r.write_mode) for r in second.collect()) == [
        ("buy", "rebuild"),
        ("click", "append"),
        ("view", "create"),
    ]
    _logged(spark, db, second)
    assert _silver(spark, db) == _silver(spark, whole)
    # A second writer whose bronze is older than the first's: its replace ends at its own
    # highest load.
    for name in databases:
        _land(spark, name, 3)
    _logged(spark, whole, _refresh(spark, whole))
    stale = spark.table(f"{db}.loads").localCheckpoint()
    _logged(spark, db, _refresh(spark, db))
    behind = refresh_silver(
        spark,
        spark.table(f"{db}.{BRONZE}").where("load_seq <= 2"),
        spark.table(f"{db}.registry"),
        stale.where("to_load_seq < 2 or event_type <> 'click'"),
        db,
        "s__",
        "t3",
    ).localCheckpoint()
    assert [(r.event_type, r.write_mode) for r in behind.collect()] == [("click", "append")]
    assert _silver(spark, db) == _silver(spark, whole)


def test_a_table_the_log_does_not_know_is_replaced(spark, databases):
    """A table of a silver name that no refresh wrote (a team's own, left by an older layout)
    is replaced by the refresh that first writes its type, which logs a create."""
    _, db = databases
    _land(spark, db, 1)
    _logged(spark, db, _refresh(spark, db))
    _land(spark, db, 2)
    stray = "select 'stray' as page, 2L as _load_seq, localtimestamp() as _ingested_at"
    spark.sql(f"create table {db}.s__view using delta as {stray}")
    _logged(spark, db, _refresh(spark, db))
    assert [r.page for r in spark.table(f"{db}.s__view").collect()] == ["a"]
    assert ("view", "create", 2, 2, 1, 2, ["event_type", "page"]) in _log(spark, db)


def test_a_writer_with_an_older_log_never_moves_a_table_back(spark, databases):
    """A writer that read the log and the registry before another one rebuilt a table and
    created another with later loads (the stream beside a build) writes after it: Delta skips
    its rebuild and its create (their highest loads are below the table's), so the later loads
    stay; the next refresh has nothing to write and the tables equal one writer's."""
    whole, db = databases
    for name in databases:
        _land(spark, name, 1)
        _logged(spark, name, _refresh(spark, name))
    # The older writer's view: the log of load 1, bronze and the registry through load 2.
    stale_log = spark.table(f"{db}.loads").localCheckpoint()
    for name in databases:
        _land(spark, name, 2)
    stale_bronze = spark.table(f"{db}.{BRONZE}").localCheckpoint()
    stale_registry = spark.table(f"{db}.registry").localCheckpoint()
    for name in databases:
        _land(spark, name, 3)
        _land(spark, name, 4)
    _logged(spark, whole, _refresh(spark, whole))
    later = _refresh(spark, db)  # through load 4: buy rebuilt, view created, click appended
    assert sorted((r.event_type, r.write_mode, r.to_load_seq) for r in later.collect()) == [
        ("buy", "rebuild", 4),
        ("click", "append", 3),
        ("view", "create", 4),
    ]
    _logged(spark, db, later)
    guard = write_guard(spark, f"{db}.{BRONZE}")
    older = refresh_silver(
        spark, stale_bronze, stale_registry, stale_log, db, "s__", "t0", guard=guard
    ).localCheckpoint()
    assert sorted((r.event_type, r.write_mode, r.to_load_seq) for r in older.collect()) == [
        ("buy", "rebuild", 2),
        ("click", "append", 2),
        ("view", "create", 2),
    ]
    _logged(spark, db, older)
    assert _silver(spark, db) == _silver(spark, whole)
    assert _refresh(spark, db).count() == 0
    # Unguarded, the same older writer replaces both tables with fewer loads.
    refresh_silver(spark, stale_bronze, stale_registry, stale_log, db, "s__", "t1").collect()
    assert _silver(spark, db) != _silver(spark, whole)


def test_started_rows_of_an_older_log_are_dropped(spark, databases):
    """Logs written before the log became the truth hold a ``started`` marker row per refresh
    (empty event type, load 0): they are deleted, the loads kept, and a refresh goes on."""
    _, db = databases
    _land(spark, db, 1)
    _logged(spark, db, _refresh(spark, db))
    marker = "('', '', 0, 'started', 0, 0, 0, 0, array(), localtimestamp(), 'old')"
    spark.sql(f"insert into {db}.loads values {marker}, {marker}")
    loads = spark.table(f"{db}.loads").where("write_mode <> 'started'").count()
    assert loads == 2

    assert drop_started_rows(spark, f"{db}.loads") == 2
    assert drop_started_rows(spark, f"{db}.loads") == 0
    modes = sorted(r.write_mode for r in spark.table(f"{db}.loads").collect())
    assert modes == ["create", "create"]
    _land(spark, db, 2)
    _logged(spark, db, _refresh(spark, db))
    assert _log(spark, db) == [row for row in EXPECTED_LOG if row[3] <= 2]


def test_a_type_behind_the_others_in_the_log_gets_every_pending_load(spark, databases):
    """A refresh reads bronze above the lowest load that every accepted type is done through.
    Hand-written log: click done through load 1 only (its later rows gone), buy not in the log at
    all (its table gone), view done through load 2. The refresh must bring click from load 2 and
    buy from load 1, as the uninterrupted run had written them: a bound taken from the types
    ahead, or from the logged types only, would skip those loads."""
    _, behind = databases
    for day in (1, 2):
        _land(spark, behind, day)
        _logged(spark, behind, _refresh(spark, behind))
    uninterrupted = _silver_by_name(spark, behind)
    spark.sql(f"delete from {behind}.loads where event_type = 'click' and to_load_seq > 1")
    spark.sql(f"delete from {behind}.s__click where _load_seq > 1")
    spark.sql(f"delete from {behind}.loads where event_type = 'buy'")
    spark.sql(f"drop table {behind}.s__buy")
    through = spark.table(f"{behind}.loads").groupBy("event_type").agg({"to_load_seq": "max"})
    done = dict(through.collect())
    assert done == {"click": 1, "view": 2}

    # Rows deleted behind the log's back are no state a refresh's commits leave (the guard
    # would keep click's table, written through load 2 already): this refresh is unguarded.
    rows = _refresh(spark, behind, guarded=False)
    caught_up = sorted(
        (r.event_type, r.write_mode, r.from_load_seq, r.to_load_seq, r.events_written)
        for r in rows.collect()
    )
    assert caught_up == [("buy", "create", 1, 2, 2), ("click", "append", 2, 2, 1)]
    assert _silver_by_name(spark, behind) == uninterrupted


def test_checkpoint_intervals_spread_the_checkpoints_of_tables_appended_together():
    """52 tables created in one refresh, then appended once per refresh: how many write a
    checkpoint at each commit (Delta writes one at every multiple of a table's interval)."""
    intervals = [checkpoint_interval(f"feed.silver__type_{n:03d}") for n in range(52)]
    assert all(20 <= interval < 40 for interval in intervals)
    per_commit = [sum(v % i == 0 for i in intervals) for v in range(1, 1001)]
    assert max(per_commit) < 52 / 2  # with Delta's default for all: 52 every 10th commit
    assert sum(per_commit) / len(per_commit) < 2.5  # Delta's default: 5.2 a commit


def test_two_writers_refreshing_at_once_leave_the_tables_of_one(spark, databases):
    """Two real writers at once (two threads, each on a session of its own, started together,
    as the stream's micro-batch beside a build): each runs the stream's refresh, its conflicts
    retried; silver then holds each event exactly once, as one writer leaves it, and the log
    knows every load (a load both wrote is logged by both)."""
    whole, db = databases
    tables = FeedTables(db, "f", "s__")
    for seq in (1, 2):
        for name in databases:
            _land(spark, name, seq)
        _logged(spark, whole, _refresh(spark, whole))
        bronze, registry = spark.table(f"{db}.{BRONZE}"), spark.table(f"{db}.registry")
        _refresh_silver(spark, bronze, registry, tables, "earlier", seq, "t")
    for name in databases:
        _land(spark, name, 3)
    _logged(spark, whole, _refresh(spark, whole))
    start, failures = threading.Barrier(2), []

    def writer(app_id: str) -> None:
        session = spark.newSession()
        bronze, registry = session.table(f"{db}.{BRONZE}"), session.table(f"{db}.registry")
        start.wait()
        try:
            _refresh_silver(session, bronze, registry, tables, app_id, 1, app_id)
        except Exception as error:  # a conflict left after the retries: the test's failure
            failures.append(error)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("stream", "build")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not failures, [str(f)[:1500] for f in failures]
    assert _silver(spark, db) == _silver(spark, whole)
    assert set(map(repr, _log(spark, db, tables.silver_loads))) == set(
        map(repr, _log(spark, whole))
    )
