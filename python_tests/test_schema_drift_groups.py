"""A feed's silver in event groups: one ingest query (bronze, registry) and a query per group over
bronze give the silver tables one query gives; a group that fails stops alone and is restarted
alone without loss or duplicates; a new event type joins its running group."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from stream_support import scrape_metrics

from spark_cdc.schema_drift.event_groups import GroupingError, parse_grouping
from spark_cdc.schema_drift.stream import FeedTables, start_group_stream, start_stream

SCHEMA = "spark_cdc_event_groups"
PREFIX = "schema_drift_silver__"
GROUPING = parse_grouping({"orders": ["order_*"], "rest": ["*"]})
RUN_COLUMNS = {"_ingested_at"}  # when a row was written: differs between runs

BATCHES = [
    [
        {"event_type": "order_placed", "order_id": 1, "amount": 10},
        {"event_type": "order_paid", "order_id": 1},
        {"event_type": "page_view", "url": "/a"},
        {"event_type": "signup", "email": "a@example.com"},
    ],
    [  # new attributes
        {"event_type": "order_placed", "order_id": 2, "amount": 20, "coupon": "X"},
        {"event_type": "page_view", "url": "/b", "referrer": {"site": "s"}},
        "{not json",
    ],
    [  # a widening (amount bigint -> double) and a new type
        {"event_type": "order_placed", "order_id": 3, "amount": 2.5},
        {"event_type": "order_paid", "order_id": 3},
        {"event_type": "wishlist_added", "item": 7},
    ],
]


def _land(root: Path, number: int, lines: list) -> None:
    folder = root / f"batch_{number:04d}"
    folder.mkdir(parents=True)
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    (folder / "part-00000.jsonl").write_text("\n".join(text) + "\n", encoding="utf-8")


def _silver(spark, tables: FeedTables) -> dict[str, Counter]:
    """Every silver table of the feed, as rows without the run columns."""
    names = [
        row.tableName
        for row in spark.sql(f"show tables in {SCHEMA}").collect()
        if row.tableName.startswith(tables.silver_prefix)
    ]
    state = {}
    for name in names:
        frame = spark.table(f"{SCHEMA}.{name}")
        kept = sorted(c for c in frame.columns if c not in RUN_COLUMNS)
        state[name.removeprefix(tables.silver_prefix)] = Counter(
            tuple(row) for row in frame.select(*kept).collect()
        )
    return state


def _run(run) -> Exception | None:
    try:
        run.query.awaitTermination()
    except Exception as error:  # the query's failure
        return error
    finally:
        run.finish()
    return None


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("groups") / "landing"
    for number, lines in enumerate(BATCHES, start=1):
        _land(root, number, lines)
    return root


@pytest.fixture
def fresh_schema(spark):
    spark.sql(f"drop schema if exists {SCHEMA} cascade")
    spark.sql(f"create schema {SCHEMA}")
    yield
    spark.sql(f"drop schema if exists {SCHEMA} cascade")


def test_groups_give_the_silver_tables_one_query_gives(spark, landing, tmp_path, fresh_schema):
    single = FeedTables(SCHEMA, "single", f"{PREFIX}single__")
    grouped = FeedTables(SCHEMA, "grouped", f"{PREFIX}grouped__")
    options = {"available_now": True, "max_files_per_trigger": 1}
    assert _run(start_stream(spark, str(landing), single, tmp_path / "single", **options)) is None
    ingest = start_stream(
        spark, str(landing), grouped, tmp_path / "ingest", ingest_only=True, **options
    )
    assert _run(ingest) is None
    assert _silver(spark, grouped) == {}  # the ingest query writes no silver table
    batches, served = {}, {}
    for group in ("orders", "rest"):
        run = start_group_stream(
            spark, grouped.of_group(group), GROUPING, tmp_path / group, metrics_port=0, **options
        )
        try:
            assert _run(run) is None
            served[group] = scrape_metrics(run.metrics_port, "grouped", query=group)
        finally:
            run.close_metrics()
        batches[group] = sum(1 for p in run.query.recentProgress if p["numInputRows"] > 0)
    # One of bronze's data files per micro-batch (--max-files-per-trigger 1 with --group).
    bronze_files = spark.sql(f"describe detail {grouped.bronze}").first().numFiles
    assert batches == {"orders": bronze_files, "rest": bronze_files} and bronze_files > 1
    # Each group's metrics, labelled with its name, are its own monitoring table's: every
    # bronze row read once by each group.
    bronze_rows = spark.table(grouped.bronze).count()
    for group in ("orders", "rest"):
        progress = spark.table(grouped.of_group(group).stream_progress).collect()
        assert served[group]["spark_cdc_stream_batches_total"] == len(progress) == bronze_files
        assert served[group]["spark_cdc_stream_input_rows_total"] == sum(
            row.input_rows for row in progress
        )
        assert sum(row.input_rows for row in progress) == bronze_rows

    expected = _silver(spark, single)
    assert set(expected) == {"order_placed", "order_paid", "page_view", "signup", "wishlist_added"}
    assert _silver(spark, grouped) == expected
    logs = {
        group: {
            row.event_type for row in spark.table(grouped.of_group(group).silver_loads).collect()
        }
        for group in ("orders", "rest")
    }
    assert logs == {
        "orders": {"order_placed", "order_paid"},
        "rest": {"page_view", "signup", "wishlist_added"},
    }
    # Grouped now: the one-query stream of this feed is refused before it writes anything.
    version = spark.sql(f"describe history {grouped.bronze}").first().version
    with pytest.raises(GroupingError, match="written by its event groups"):
        start_stream(spark, str(landing), grouped, tmp_path / "late", available_now=True)
    other = parse_grouping({"orders": ["order_*", "payment_*"], "rest": ["*"]})
    with pytest.raises(GroupingError, match="were started as orders=order_\\*; rest=\\*"):
        start_group_stream(spark, grouped.of_group("orders"), other, tmp_path / "other")
    assert spark.sql(f"describe history {grouped.bronze}").first().version == version


def test_a_failing_group_stops_alone_and_a_new_type_joins_its_group_without_a_restart(
    spark, tmp_path, fresh_schema
):
    tables = FeedTables(SCHEMA, "live", f"{PREFIX}live__")
    root = tmp_path / "landing"
    root.mkdir()
    _land(root, 1, BATCHES[0])
    ingest = start_stream(
        spark, str(root), tables, tmp_path / "ingest", ingest_only=True, trigger_interval="1 second"
    )
    ingest.query.processAllAvailable()

    def group_run(group: str, **options):
        return start_group_stream(
            spark, tables.of_group(group), GROUPING, tmp_path / group, **options
        )

    orders = group_run("orders", trigger_interval="1 second")
    rest = group_run("rest", trigger_interval="1 second")
    try:
        orders.query.processAllAvailable()
        rest.query.processAllAvailable()
        placed = f"{SCHEMA}.{tables.silver_prefix}order_placed"
        # An incompatible change for the orders group: its table now refuses large amounts.
        spark.sql(f"alter table {placed} add constraint small_amounts check (amount < 100)")
        _land(
            root,
            2,
            [
                {"event_type": "order_placed", "order_id": 9, "amount": 500},
                {"event_type": "order_paid", "order_id": 9},
                {"event_type": "page_view", "url": "/c"},
            ],
        )
        ingest.query.processAllAvailable()
        rest.query.processAllAvailable()
        failed = orders.query.exception() or _wait_for_failure(orders)
        assert failed is not None and "small_amounts" in str(failed)
        assert not orders.query.isActive and rest.query.isActive

        _land(
            root,
            3,
            [
                {"event_type": "wishlist_added", "item": 7},
                {"event_type": "order_refunded", "order_id": 1},
            ],
        )
        ingest.query.processAllAvailable()
        rest.query.processAllAvailable()
        assert rest.query.isActive  # the same query, never restarted
        wishlist = spark.table(f"{SCHEMA}.{tables.silver_prefix}wishlist_added")
        assert [row.item for row in wishlist.collect()] == [7]
        views = spark.table(f"{SCHEMA}.{tables.silver_prefix}page_view").collect()
        assert sorted(row.url for row in views) == ["/a", "/c"]
        assert not spark.catalog.tableExists(f"{SCHEMA}.{tables.silver_prefix}order_refunded")
    finally:
        for run in (ingest, rest, orders):
            if run.query.isActive:
                run.query.stop()
            run.finish()

    # Fixed and restarted alone, from its checkpoint: what it missed, once.
    spark.sql(f"alter table {placed} drop constraint small_amounts")
    assert _run(group_run("orders", available_now=True)) is None
    amounts = sorted(row.amount for row in spark.table(placed).collect())
    assert amounts == [10, 500]
    paid = spark.table(f"{SCHEMA}.{tables.silver_prefix}order_paid").collect()
    assert sorted(row.order_id for row in paid) == [1, 9]
    refunded = spark.table(f"{SCHEMA}.{tables.silver_prefix}order_refunded").collect()
    assert [row.order_id for row in refunded] == [1]


def _wait_for_failure(run, seconds: float = 120):
    try:
        run.query.awaitTermination(seconds)
    except Exception as error:
        return error
    return None
