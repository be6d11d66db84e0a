"""Schema drift as a Structured Streaming query gives the tables dbt gives: the same landed
files taken in by three dbt builds (one batch each), then by the stream (one file per micro-batch,
available-now), compare equal row for row, times and process ids aside."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from spark_cdc.generators.json_events import JsonEventSpec, write_batches
from spark_cdc.schema_drift.stream import FeedTables, start_stream

SCHEMA = "spark_cdc"
TABLES = FeedTables(SCHEMA, "events", "schema_drift_silver__events__")
MONITORING = ("schema_drift__events_quarantine", "schema_drift__events_run_summary")
# Columns that hold when or by which run a row was written: they differ between any two runs.
RUN_COLUMNS = {
    "load_id",
    "ingested_at",
    "registered_at",
    "first_seen_at",
    "last_seen_at",
    "loaded_at",
    "process_id",
    "_ingested_at",
}


def _feed_tables(spark) -> list[str]:
    names = [
        TABLES.bronze,
        TABLES.registry,
        TABLES.silver_loads,
        *(f"{SCHEMA}.{name}" for name in MONITORING),
    ]
    silver = [
        f"{SCHEMA}.{t.name}"
        for t in spark.catalog.listTables(SCHEMA)
        if t.name.startswith(TABLES.silver_prefix)
    ]
    return names + sorted(silver)


def _state(spark) -> dict[str, Counter]:
    """Every table of the feed, as a multiset of rows without the run columns."""
    state = {}
    for name in _feed_tables(spark):
        frame = spark.table(name)
        kept = [c for c in frame.columns if c not in RUN_COLUMNS]
        state[name] = Counter(
            tuple(json.dumps(v, default=str, sort_keys=True) for v in row)
            for row in frame.select(*kept).collect()
        )
    return state


def _drop_all(spark) -> None:
    spark.sql(f"create schema if not exists {SCHEMA}")
    for name in _feed_tables(spark):
        spark.sql(f"drop table if exists {name}")


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> list[Path]:
    spec = JsonEventSpec(events=600, event_types=4, batches=3, new_variation_rate=0.1, seed=7)
    folders = write_batches(tmp_path_factory.mktemp("generated"), spec)
    # Landed in order: the stream takes files oldest first.
    for number, folder in enumerate(folders):
        for path in folder.glob("*.jsonl"):
            os.utime(path, (1_800_000_000 + number, 1_800_000_000 + number))
    return folders


def test_the_stream_builds_what_dbt_builds(spark, dbt, batches, tmp_path):
    root = tmp_path / "landing"
    variables = json.dumps({"schema_drift_landing_roots": {"events": str(root)}})
    _drop_all(spark)
    for folder in batches:
        shutil.copytree(folder, root / folder.name, copy_function=shutil.copy2)
        dbt("build", "--select", "stg_schema_drift__events+", "--vars", variables)
    by_dbt = _state(spark)
    assert len(by_dbt) > len(MONITORING) + 3  # silver tables were written

    _drop_all(spark)
    query = start_stream(
        spark,
        str(root),
        TABLES,
        tmp_path / "checkpoint",
        available_now=True,
        max_files_per_trigger=1,
    )
    query.awaitTermination()
    assert query.exception() is None
    assert [p["numInputRows"] > 0 for p in query.recentProgress].count(True) == len(batches)
    dbt("run", "--select", *MONITORING, "--vars", variables)
    by_stream = _state(spark)

    assert by_stream.keys() == by_dbt.keys()
    for name in by_dbt:
        assert by_stream[name] == by_dbt[name], name
