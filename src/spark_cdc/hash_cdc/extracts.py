"""Reading extracts from the landing folder and finding the current table's previous states."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from spark_cdc.hash_cdc.config import ConfigError

EFFECTIVE_DATE_KEY = "hash_cdc_effective_date"


def landing_folder(root: str, dataset: str, effective_date: str) -> Path:
    """Where the extract of ``dataset`` for ``effective_date`` lands: <root>/<dataset>/<date>/."""
    return Path(root) / dataset / effective_date


def read_extract(spark: SparkSession, folder: Path, file_format: str = "csv") -> DataFrame:
    """The extract's rows with every column as a string (casting is stage 1's job)."""
    if not folder.is_dir() or not any(folder.glob(f"*.{file_format}")):
        raise ConfigError(f"no {file_format} extract in {folder}")
    if file_format == "csv":
        return spark.read.option("header", True).option("inferSchema", False).csv(str(folder))
    frame = spark.read.parquet(str(folder))
    return frame.select(*[frame[c].cast("string").alias(c) for c in frame.columns])


def commit_metadata(effective_date: str) -> str:
    """Delta commit userMetadata recording which effective date a write applied."""
    return json.dumps({EFFECTIVE_DATE_KEY: effective_date})


def applied_dates(spark: SparkSession, table: str) -> list[tuple[int, str]]:
    """(Delta version, effective date) of every commit of ``table`` that applied a date."""
    if not spark.catalog.tableExists(table):
        return []
    found = []
    for row in spark.sql(f"describe history {table}").select("version", "userMetadata").collect():
        try:
            date = json.loads(row.userMetadata or "{}").get(EFFECTIVE_DATE_KEY)
        except json.JSONDecodeError:
            date = None
        if date:
            found.append((int(row.version), date))
    return sorted(found)


class OutOfOrderDateError(RuntimeError):
    """An effective date older than the latest applied one, without force."""


def previous_state(
    spark: SparkSession, table: str, effective_date: str, force: bool = False
) -> DataFrame | None:
    """The current table as it was before ``effective_date`` was applied (Delta time travel).

    Re-running the latest date recomputes it from the same previous state (idempotent); an older
    date is refused unless ``force`` (then it is applied on the state before it, and later dates
    must be re-run).
    """
    applied = applied_dates(spark, table)
    if not applied:
        return None
    latest = max(date for _, date in applied)
    if effective_date < latest and not force:
        raise OutOfOrderDateError(
            f"{table}: effective date {effective_date} is older than the latest applied date "
            f"{latest}; re-run with --vars '{{hash_cdc_force: true}}' to apply it anyway"
        )
    before = [version for version, date in applied if date < effective_date]
    if not before:
        return None
    return spark.sql(f"select * from {table} version as of {max(before)}")
