"""Silver refreshes without dbt: an interrupted refresh is repeated without duplicates."""

from __future__ import annotations

from datetime import datetime

from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.registry import registry_increment
from spark_cdc.schema_drift.silver import METADATA_COLUMNS, STARTED, refresh_silver

DB = "silver_refresh_test"
BRONZE, REGISTRY, LOG = f"{DB}.bronze", f"{DB}.registry", f"{DB}.loads"
RAW = "payload string, source_file string, batch_id string, file_modified_at timestamp_ntz"


def _land(spark, lines: list[str], name: str) -> None:
    raw = spark.createDataFrame([(line, name, name, datetime(2026, 1, 1)) for line in lines], RAW)
    existing = spark.table(BRONZE) if spark.catalog.tableExists(BRONZE) else None
    bronze_increment(raw, existing, name).write.format("delta").mode("append").saveAsTable(BRONZE)
    prior = spark.table(REGISTRY).localCheckpoint() if spark.catalog.tableExists(REGISTRY) else None
    rows = registry_increment(spark, spark.table(BRONZE), prior, name, METADATA_COLUMNS)
    merged = (
        rows if prior is None else prior.join(rows, ["event_type", "variation_hash"], "left_anti")
    )
    table = merged if prior is None else merged.unionByName(rows)
    table.localCheckpoint().write.format("delta").mode("overwrite").saveAsTable(REGISTRY)


def _refresh(spark):
    log = spark.table(LOG) if spark.catalog.tableExists(LOG) else None
    out = refresh_silver(
        spark, spark.table(BRONZE), spark.table(REGISTRY), log, LOG, DB, "s__", "t"
    )
    return out


def test_an_interrupted_refresh_is_repeated_without_duplicates(spark):
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    _land(spark, ['{"event_type":"click","x":1}', '{"event_type":"click","x":2}'], "f1")
    _refresh(spark).write.format("delta").saveAsTable(LOG)
    assert spark.table(f"{DB}.s__click").count() == 2

    _land(spark, ['{"event_type":"click","x":3,"y":"new"}'], "f2")
    interrupted = _refresh(spark)  # tables written, but its log rows are never appended
    assert spark.table(f"{DB}.s__click").count() == 3
    assert [r.write_mode for r in spark.table(LOG).collect()].count(STARTED) == 1
    del interrupted

    _land(spark, ['{"event_type":"click","x":4}'], "f3")
    _refresh(spark).write.format("delta").mode("append").saveAsTable(LOG)
    rows = sorted((r.x, r.y, r._load_seq) for r in spark.table(f"{DB}.s__click").collect())
    assert rows == [(1, None, 1), (2, None, 1), (3, "new", 2), (4, None, 3)]
    log = spark.table(LOG).where(f"write_mode != '{STARTED}'").collect()
    assert sorted((r.write_mode, r.from_load_seq, r.to_load_seq) for r in log) == [
        ("append", 2, 3),
        ("create", 1, 1),
    ]
