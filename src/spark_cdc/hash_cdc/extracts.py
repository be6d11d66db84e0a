"""Reading extracts from the landing folder and finding the current table's previous states."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from spark_cdc.core.delta_commits import live_marks
from spark_cdc.core.paths import spark_location
from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig

EFFECTIVE_DATE_KEY = "hash_cdc_effective_date"
# The raw text of a CSV line whose field count differs from the header's (Spark's corrupt-record
# column): such rows are quarantined as column_count_mismatch.
MALFORMED_LINE = "_malformed_line"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def effective_date_text(value: object) -> str:
    """An effective date as 'YYYY-MM-DD', from a string or a date (YAML reads an unquoted
    2019-06-18 as a date); a clear error for anything else or an impossible date."""
    from datetime import date, datetime

    if isinstance(value, datetime):
        value = value.date()
    text = value.isoformat() if isinstance(value, date) else str(value).strip()
    if not _DATE.match(text):
        raise ConfigError(f"hash_cdc_effective_date must be a date YYYY-MM-DD, got {value!r}")
    try:
        date.fromisoformat(text)
    except ValueError as error:
        raise ConfigError(
            f"hash_cdc_effective_date {text!r} is not a valid date: {error}"
        ) from None
    return text


def landing_folder(root: str, dataset: str, effective_date: str) -> str:
    """Where the extract of ``dataset`` for ``effective_date`` lands: <root>/<dataset>/<date>/
    (a local path or any URL Spark reads, e.g. s3a://bucket/landing)."""
    return f"{spark_location(root).rstrip('/')}/{dataset}/{effective_date}"


def _all_strings(names: list[str], extra: tuple[str, ...] = ()) -> StructType:
    return StructType([StructField(name, StringType()) for name in [*names, *extra]])


def _check_header(names: list[str], folder: str) -> None:
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            raise ConfigError(
                f"the extract in {folder} names a column twice (ignoring case): "
                f"{seen[name.lower()]!r} and {name!r}"
            )
        seen[name.lower()] = name


def _read_failure(folder: str, file_format: str, error: Exception) -> ConfigError:
    lines = [line for line in str(error).splitlines() if "[" in line or "Exception" in line]
    text = (lines or str(error).splitlines() or [type(error).__name__])[0].strip()
    text = text.removeprefix("An error occurred while calling").strip()
    if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
        return ConfigError(f"no {file_format} extract in {folder}")
    return ConfigError(f"the {file_format} extract in {folder} cannot be read: {text[:300]}")


def read_extract(
    spark: SparkSession, folder: str | Path, config: DatasetConfig, file_format: str = "csv"
) -> DataFrame:
    """The extract's rows with every column as a string (casting is stage 1's job).

    CSV: the header names the columns (a name repeated ignoring case is refused); every file's
    header must name the same columns (Spark checks each file); a line with more or fewer fields
    than the header keeps its raw text in ``_malformed_line``. Files of zero bytes hold zero
    rows. An unreadable file (not CSV/Parquet at all) is a clear :class:`ConfigError`.
    """
    folder = str(folder)
    pattern = f"*.{file_format}"
    try:
        # Listed through Spark (the folder may be remote); files of zero bytes are listed but
        # yield no row.
        files = spark.read.format("binaryFile").option("pathGlobFilter", pattern).load(folder)
        listed = files.inputFiles()
        with_content = files.select("length").limit(1).count()
    except Exception as error:  # any reading failure: a clear error naming the folder
        raise _read_failure(folder, file_format, error) from None
    if not listed:
        raise ConfigError(f"no {file_format} extract in {folder} (no {pattern} file)")
    if not with_content:
        # Only empty files: zero rows (the guards decide whether zero rows may be applied).
        columns = list(config.read_columns)
        return spark.createDataFrame([], _all_strings(columns, (MALFORMED_LINE,)))
    try:
        if file_format == "csv":
            return _read_csv(spark, folder, pattern, listed)
        frame = spark.read.option("pathGlobFilter", pattern).parquet(folder)
    except ConfigError:
        raise
    except Exception as error:  # any reading failure: a clear error naming the folder
        raise _read_failure(folder, file_format, error) from None
    _check_header(frame.columns, folder)
    return frame.select(
        *[frame[f"`{c}`"].cast("string").alias(c) for c in frame.columns],
        F.lit(None).cast("string").alias(MALFORMED_LINE),
    )


def _csv_header(spark: SparkSession, files: list[str]) -> list[str]:
    """The header line as written in the first file that has one (Spark's own reading renames
    repeated names, so it cannot tell them)."""
    for path in sorted(files):
        first = spark.read.text(path).where(F.trim("value") != "").first()
        if first is not None:
            fields = next(csv.reader([first.value]))
            # Spark names an empty header field _c<position>, as it reads it.
            return [name if name else f"_c{position}" for position, name in enumerate(fields)]
    return []


def _read_csv(spark: SparkSession, folder: str, pattern: str, files: list[str]) -> DataFrame:
    header = _csv_header(spark, files)
    _check_header(header, folder)
    return (
        spark.read.option("header", True)
        # RFC 4180: a quote inside a quoted value is doubled ("" -> "). Spark's default escape
        # (a backslash) would keep the doubled quotes and the outer ones in the value.
        .option("escape", '"')
        .option("pathGlobFilter", pattern)
        .option("enforceSchema", False)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", MALFORMED_LINE)
        .schema(_all_strings(header, (MALFORMED_LINE,)))
        .csv(folder)
    )


def commit_metadata(effective_date: str) -> str:
    """Delta commit userMetadata recording which effective date a write applied."""
    return json.dumps({EFFECTIVE_DATE_KEY: effective_date})


def applied_dates(spark: SparkSession, table: str) -> list[tuple[int, str]]:
    """(Delta version, effective date) of every commit of ``table`` that applied a date and is
    still part of the table's state: a ``RESTORE`` to version N undoes the commits after N, so
    their dates no longer count (a table put back by hand goes on from the restored date)."""
    if not spark.catalog.tableExists(table):
        return []
    history = (
        spark.sql(f"describe history {table}")
        .select("version", "timestamp", "operation", "operationParameters", "userMetadata")
        .collect()
    )
    return _live_dates(history)


def _commit_date(user_metadata: str | None) -> str | None:
    """The effective date a commit's userMetadata records, if any."""
    try:
        return json.loads(user_metadata or "{}").get(EFFECTIVE_DATE_KEY)
    except (json.JSONDecodeError, AttributeError):
        return None


def _live_dates(history: list) -> list[tuple[int, str]]:
    """(version, date) of the date-applying commits the table's state still holds."""
    return live_marks(history, _commit_date)


class OutOfOrderDateError(RuntimeError):
    """An effective date older than the latest applied one, without force."""


def check_date_order(
    applied: list[tuple[int, str]], table: str, effective_date: str, force: bool = False
) -> None:
    """Refuse an effective date older than the latest applied one (the date of the table's last
    write: after a forced older date, that date), unless ``force``."""
    if not applied:
        return
    latest = max(applied)[1]
    if effective_date < latest and not force:
        raise OutOfOrderDateError(
            f"{table}: effective date {effective_date} is older than the latest applied date "
            f"{latest}; nothing was written. Re-run with --vars '{{hash_cdc_force: true}}' to "
            "apply it anyway (the later dates must then be re-run in order)"
        )


def previous_state(
    spark: SparkSession, table: str, effective_date: str, force: bool = False
) -> DataFrame | None:
    """The current table as it was before ``effective_date`` was applied (Delta time travel).

    Re-running the latest date recomputes it from the same previous state (idempotent); an older
    date is refused unless ``force`` (then it is applied on the state before it, and later dates
    must be re-run).
    """
    applied = applied_dates(spark, table)
    check_date_order(applied, table, effective_date, force)
    before = [version for version, date in applied if date < effective_date]
    if not before:
        return None
    return spark.sql(f"select * from {table} version as of {max(before)}")
