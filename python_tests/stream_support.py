"""The schema-drift stream's drift scenario (and the same files in event groups), run by the suite
on the embedded runtime and by the engine suite on the warm Connect engine and a standalone
cluster."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.request import urlopen

from spark_cdc.schema_drift.event_groups import parse_grouping
from spark_cdc.schema_drift.stream import FeedTables, start_group_stream, start_stream


def scrape_metrics(port: int, feed: str, query: str | None = None) -> dict[str, float]:
    """The samples a stream's Prometheus endpoint serves for ``feed`` (and its ``query``: the
    feed's, ``ingest`` or a group's), by name."""
    from prometheus_client.parser import text_string_to_metric_families

    with urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.labels.get("feed") == feed
        and (query is None or sample.labels.get("query") == query)
    }


def _land(root: Path, number: int, lines: list) -> None:
    folder = root / f"batch_{number:04d}"
    folder.mkdir(parents=True)
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    (folder / "part-00000.jsonl").write_text("\n".join(text) + "\n", encoding="utf-8")


def drift_while_running(spark, work: Path, tables: FeedTables) -> None:
    """The talk's example: `has_plugins` appears in a later file; one running query registers
    version 2 and adds the column, gives a new event type its table, and keeps a conflicting
    variation and a malformed line out of silver (in the registry and bronze, with why). The
    feed's tables must not exist yet."""
    talk = f"{tables.schema}.{tables.silver_prefix}1_1_b05e2447"  # "1.1": sanitized + hash
    root = work / "landing"
    root.mkdir()
    run = start_stream(spark, str(root), tables, work / "checkpoint", trigger_interval="1 second")
    try:
        _land(
            root,
            1,
            [
                {"event_type": "1.1", "user_agent": "Mozilla/5.0"},
                {"event_type": "purchase", "amount": 3, "device": {"os": "linux"}},
            ],
        )
        run.query.processAllAvailable()
        before = spark.table(talk).columns
        _land(
            root,
            2,
            [
                {"event_type": "1.1", "user_agent": "curl/8.5", "has_plugins": True},
                {"event_type": "signup", "email": "a@example.com"},
                {"event_type": "purchase", "amount": 4, "device": "pc"},
                "{not json",
            ],
        )
        run.query.processAllAvailable()
        assert run.query.isActive  # the same query took both files in
    finally:
        run.query.stop()
        run.finish()

    assert "has_plugins" not in before
    rows = spark.table(talk).collect()
    assert {(r.user_agent, r.has_plugins) for r in rows} == {
        ("Mozilla/5.0", None),
        ("curl/8.5", True),
    }
    registry = spark.table(tables.registry)
    versions = registry.where("event_type = '1.1'").select("schema_version", "status").collect()
    assert sorted(tuple(r) for r in versions) == [(1, "accepted"), (2, "accepted")]
    assert spark.table(f"{tables.schema}.{tables.silver_prefix}signup").count() == 1
    purchase = registry.where("event_type = 'purchase'").collect()
    assert sorted(r.status for r in purchase) == ["accepted", "conflict"]
    assert spark.table(f"{tables.schema}.{tables.silver_prefix}purchase").count() == 1
    malformed = spark.table(tables.bronze).where("has_parse_error").collect()
    assert [(r.payload, r.parse_error) for r in malformed] == [("{not json", "malformed_json")]
    # Monitoring: both files' batches, as written by the listener and by foreachBatch.
    progress = spark.table(tables.stream_progress).collect()
    assert sum(r.input_rows for r in progress) == 6
    assert sum(r.events for r in spark.table(tables.stream_batches).collect()) == 6


def groups_take_in_what_one_query_took(spark, work: Path, tables: FeedTables) -> None:
    """After :func:`drift_while_running`: the same landed files taken in by an ingest query and
    two event groups (the talk's type alone, the rest) give the silver tables of the one query."""
    grouping = parse_grouping({"talk": ["1.1"], "rest": ["*"]})
    grouped = FeedTables(tables.schema, f"{tables.feed}_grouped", f"{tables.silver_prefix}g_")
    root = str(work / "landing")
    # A file a micro-batch: bronze's loads (and so the registry's versions) as the one query's.
    ingest = {"available_now": True, "ingest_only": True, "max_files_per_trigger": 1}
    ingested = start_stream(spark, root, grouped, work / "ingest", **ingest)
    ingested.query.awaitTermination()
    ingested.finish()
    runs = [  # the two groups at once
        start_group_stream(
            spark, grouped.of_group(group), grouping, work / group, available_now=True
        )
        for group in ("talk", "rest")
    ]
    for run in runs:
        run.query.awaitTermination()
        run.finish()

    def silver(prefix: str) -> dict[str, list]:
        names = [
            row.tableName
            for row in spark.sql(f"show tables in {tables.schema}").collect()
            if row.tableName.startswith(prefix) and not row.tableName.startswith(f"{prefix}g_")
        ]
        found = {}
        for name in names:
            frame = spark.table(f"{tables.schema}.{name}").drop("_ingested_at")
            # By column name: a table built in one refresh orders its columns by the superset,
            # one that evolved has its newer columns last.
            rows = [sorted(row.asDict().items()) for row in frame.collect()]
            found[name.removeprefix(prefix)] = sorted(rows, key=repr)
        return found

    expected = silver(tables.silver_prefix)
    assert len(expected) == 3  # 1.1 (by its sanitized name), purchase, signup
    found = silver(grouped.silver_prefix)
    assert sorted(found) == sorted(expected)
    for name, rows in expected.items():
        assert found[name] == rows, (name, found[name], rows)
    logged = spark.table(grouped.of_group("talk").silver_loads).select("event_type").collect()
    assert {row.event_type for row in logged} == {"1.1"}
