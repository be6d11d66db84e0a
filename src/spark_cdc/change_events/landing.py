"""Land generated change-event batches in Delta tables, as an ingestion process would.

The landing tables are the dbt sources of a change-event source (models/staging/change_events):

- the feed: the columns of change_events.model, ``_batch_id`` (ingestion order: each landed batch
  gets the next id) and ``_ingested_at``;
- the existing rows (optional): the target columns, ``created_at`` and ``updated_at``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import FEED_COLUMNS
from spark_cdc.change_events.pipeline import BATCH

_JSON_SCHEMA = ", ".join(
    f"{name} {'string' if name == 'event_ts' else kind.simpleString()}"
    for name, kind in FEED_COLUMNS.items()
)


def _read_batch_file(spark: SparkSession, path: Path) -> DataFrame:
    frame = spark.read.schema(_JSON_SCHEMA).json(str(path))
    return frame.withColumn("event_ts", F.to_timestamp("event_ts"))


def next_batch_id(spark: SparkSession, table: str) -> int:
    """The id the next landed batch gets (0 for a new table)."""
    if not spark.catalog.tableExists(table):
        return 0
    latest = spark.table(table).agg(F.max(BATCH)).first()[0]
    return 0 if latest is None else latest + 1


def _ensure_schema(spark: SparkSession, table: str) -> None:
    if "." in table:
        spark.sql(f"create schema if not exists {table.rsplit('.', 1)[0]}")


def land_batch_files(spark: SparkSession, table: str, files: Sequence[Path]) -> list[int]:
    """Append each JSON-lines batch file (generators.change_events format) as the next batch."""
    _ensure_schema(spark, table)
    first = next_batch_id(spark, table)
    landed = None
    for offset, path in enumerate(files):
        batch = _read_batch_file(spark, path).withColumn(BATCH, F.lit(first + offset).cast("long"))
        landed = batch if landed is None else landed.unionByName(batch)
    if landed is None:
        return []
    now = datetime.now(UTC).replace(tzinfo=None)
    landed.withColumn("_ingested_at", F.lit(now)).write.format("delta").mode("append").saveAsTable(
        table
    )
    return list(range(first, first + len(files)))


def land_initial_rows(spark: SparkSession, table: str, path: Path, schema: TargetSchema) -> int:
    """Replace ``table`` with the existing rows of a generated stream (initial_state.jsonl)."""
    _ensure_schema(spark, table)
    columns = ", ".join(f"{c} {t}" for c, t in schema.columns.items())
    rows = spark.read.schema(f"{columns}, created_at string, updated_at string").json(str(path))
    rows = rows.withColumn("created_at", F.to_timestamp("created_at")).withColumn(
        "updated_at", F.to_timestamp("updated_at")
    )
    rows.write.format("delta").mode("overwrite").option("overwriteSchema", "true").saveAsTable(
        table
    )
    return spark.table(table).count()
