"""Land change-event batch files in Delta tables, as an ingestion process would.

The landing tables are the dbt sources of a change-event source (models/staging/change_events):

- the feed: the columns of change_events.model, ``_batch_id`` (ingestion order: each landed batch
  gets the next id), ``_ingested_at``, ``_source_file``, and for a line that could not be read
  as an event ``_landing_error`` with the line itself in ``_raw_record``;
- the existing rows (optional): the target columns, ``created_at`` and ``updated_at``.

Every non-blank line of a batch file lands as one row, whatever it holds: a line that is not a
JSON object (``malformed_json``, also for text that is not UTF-8 or has text after the object), a
field of the wrong kind (``malformed_record``), an ``event_ts`` that is not a timestamp
(``invalid_event_ts``) or an ``event_seq`` that is not a 64-bit integer (``invalid_event_seq``)
lands with its reason and raw text; the resolution quarantines it with that reason. So one bad
line never keeps the valid events of its batch out.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import FEED_COLUMNS, LANDING_ERROR, RAW_RECORD
from spark_cdc.change_events.pipeline import BATCH
from spark_cdc.core.idempotent_loads import is_overlap, load_identity, metadata_value
from spark_cdc.core.json_text import is_strict_json
from spark_cdc.core.orphan_tables import create_empty
from spark_cdc.core.paths import spark_location

SOURCE_FILE = "_source_file"
# Every field as text first: a value of the wrong type must not fail the whole batch.
_TEXT_FIELDS = ", ".join(
    f"{name} {'string' if kind.simpleString() in ('timestamp', 'bigint') else kind.simpleString()}"
    for name, kind in FEED_COLUMNS.items()
)
_CORRUPT = "_corrupt_record"


def _landing_error(line: Column, parsed: Column) -> Column:
    ts_text, seq_text = parsed["event_ts"], parsed["event_seq"]
    return (
        F.when(~is_strict_json(line), F.lit("malformed_json"))
        .when(~F.startswith(F.ltrim(line), F.lit("{")), F.lit("malformed_json"))
        .when(parsed[_CORRUPT].isNotNull(), F.lit("malformed_record"))
        .when(
            ts_text.isNotNull() & F.try_to_timestamp(ts_text).isNull(),
            F.lit("invalid_event_ts"),
        )
        .when(
            seq_text.isNotNull() & seq_text.try_cast("bigint").isNull(),
            F.lit("invalid_event_seq"),
        )
    )


def read_batch_file(spark: SparkSession, path: Path | str) -> DataFrame:
    """The events of one JSON-lines batch file: one row per non-blank line (see module doc)."""
    lines = spark.read.text(spark_location(path)).where(F.trim(F.col("value")) != "")
    return event_lines(lines.select("value", F.input_file_name().alias(SOURCE_FILE)))


def event_lines(lines: DataFrame) -> DataFrame:
    """The events of JSON lines (``value``, ``_source_file``): one row per line, read as the
    module doc says."""
    schema = f"{_TEXT_FIELDS}, {_CORRUPT} string"
    parsed = F.from_json(
        "value", schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
    )
    staged = lines.select("value", parsed.alias("p"), SOURCE_FILE)
    error = _landing_error(F.col("value"), F.col("p"))
    readable = error.isNull()
    fields = [
        F.when(readable, F.col(f"p.{name}")).cast(kind).alias(name)
        if name not in ("event_ts", "event_seq")
        else F.when(
            readable,
            F.try_to_timestamp("p.event_ts")
            if name == "event_ts"
            else F.col("p.event_seq").try_cast("bigint"),
        ).alias(name)
        for name, kind in FEED_COLUMNS.items()
    ]
    return staged.select(
        *fields,
        error.alias(LANDING_ERROR),
        F.when(~readable, F.col("value")).alias(RAW_RECORD),
        SOURCE_FILE,
    )


ABSENT = -1
"""The "version" of a table that did not exist when it was read: empty, also if a concurrent
landing creates it before this one reads it again."""


LANDING_KEY = "spark_cdc_landing"
LAST_BATCH_KEY = "spark_cdc_last_batch"
"""The key of a landing commit's ``userMetadata`` that holds the last batch id it landed."""
LAST_BATCH_PROPERTY = "spark_cdc.last_batch_id"
"""The table property that holds the last batch id landed (set after each landing commit)."""
_RECENT_COMMITS = 100
# What Delta's error says when a concurrent commit changed the table's metadata (created it).
METADATA_CHANGED = ("DELTA_METADATA_CHANGED", "MetadataChangedException")


def next_batch_id(spark: SparkSession, table: str, version: int | None = None) -> int:
    """The id the next landed batch gets (0 for a new table), as of the table's ``version``
    (the latest when None): above every batch id its rows hold and every batch id a landing
    committed, also one whose rows a DELETE or a RESTORE took away (its number is Delta's
    ``txnVersion`` of the landing, which Delta keeps: reused, the next landing would be skipped,
    and a ledger that read that batch id once would never read the new one)."""
    if version == ABSENT or not spark.catalog.tableExists(table):
        return 0
    held = table_as_of(spark, table, version).agg(F.max(BATCH)).first()[0]
    landed = last_landed_batch(spark, table, version)
    recorded = recorded_last_batch(spark, table, version)
    known = [number for number in (held, landed, recorded) if number is not None]
    return max(known) + 1 if known else 0


def recorded_last_batch(spark: SparkSession, table: str, version: int | None = None) -> int | None:
    """The last batch id the table's property ``LAST_BATCH_PROPERTY`` records, as of ``version``
    (None when the table moved past ``version`` since: the property may then be newer). Unlike
    the landing commits' ``userMetadata``, a table property survives Delta's log clean-up (the
    checkpoint keeps it), so a batch id stays used when its rows are deleted and its landing
    commit has left the log."""
    rows = spark.sql(f"show tblproperties {table} ('{LAST_BATCH_PROPERTY}')").collect()
    if version is not None and latest_version(spark, table) != version:
        return None
    value = rows[0]["value"] if rows else ""
    return int(value) if value.strip().isdigit() else None


def last_landed_batch(spark: SparkSession, table: str, version: int | None = None) -> int | None:
    """The last batch id of the newest landing committed at or before ``version`` (the latest
    when None), by the table's history (None: no landing recorded one)."""
    statement = f"describe history {table}"
    recent = spark.sql(f"{statement} limit {_RECENT_COMMITS}").collect()
    found = _newest_last_batch(recent, version)
    if found is None and len(recent) == _RECENT_COMMITS:  # older than the recent commits
        found = _newest_last_batch(spark.sql(statement).collect(), version)
    return found


def _newest_last_batch(commits: list, version: int | None) -> int | None:
    for row in sorted(commits, key=lambda commit: commit.version, reverse=True):
        if version is not None and row.version > version:
            continue
        number = metadata_value(row, LAST_BATCH_KEY)
        if number is not None:
            return int(number)
    return None


def table_as_of(spark: SparkSession, table: str, version: int | None) -> DataFrame:
    """``table`` as of Delta ``version`` (the latest when None)."""
    if version is None:
        return spark.table(table)
    return spark.read.format("delta").option("versionAsOf", version).table(table)


def latest_version(spark: SparkSession, table: str) -> int:
    """The table's latest Delta version (ABSENT when it does not exist)."""
    if not spark.catalog.tableExists(table):
        return ABSENT
    return int(spark.sql(f"describe history {table} limit 1").first()["version"])


def ensure_schema(spark: SparkSession, table: str) -> None:
    """Create the table's schema (database) when missing."""
    # Checked first: Spark logs a warning for every `create schema if not exists` of an
    # existing Hive database.
    schema = table.rsplit(".", 1)[0] if "." in table else None
    if schema and not spark.catalog.databaseExists(schema):
        spark.sql(f"create schema if not exists {schema}")


@dataclass(frozen=True)
class Landing:
    """What one landing did: the batch ids it gave the new files (in file order), and the files
    it skipped because an earlier landing took them (file -> its batch id)."""

    batch_ids: list[int]
    skipped: dict[str, int] = field(default_factory=dict)


class LandingConflictError(RuntimeError):
    """Another landing of the same table committed first; this one landed nothing."""


def land_batch_files(spark: SparkSession, table: str, files: Sequence[Path | str]) -> Landing:
    """Append each JSON-lines batch file (generators.change_events format) that the table does
    not hold yet as the next batch, all in one Delta commit (a killed landing lands nothing)."""
    return _land(spark, table, files, lambda path: read_batch_file(spark, path))


def read_debezium_file(spark: SparkSession, path: Path | str) -> DataFrame:
    """The messages of one Debezium JSON-lines file: one row per non-blank line, as delivered
    in ``value`` (read and checked later, by change_events.debezium in the source's ledger)."""
    lines = spark.read.text(spark_location(path)).where(F.trim(F.col("value")) != "")
    return lines.select("value", F.input_file_name().alias(SOURCE_FILE))


def land_debezium_files(spark: SparkSession, table: str, files: Sequence[Path | str]) -> Landing:
    """Append each Debezium JSON-lines file the table does not hold yet as the next batch
    (``value``, ``_batch_id``, ``_ingested_at``, ``_source_file``), all in one Delta commit."""
    return _land(spark, table, files, lambda path: read_debezium_file(spark, path))


def landed_name(path: Path | str) -> str:
    """The ``_source_file`` a file lands under (Spark's ``input_file_name``: a URI)."""
    location = spark_location(path)
    return location if _is_uri(location) else Path(location).as_uri()


def _is_uri(location: str) -> bool:
    return "://" in location or location.startswith("file:")


def _landed_before(
    spark: SparkSession, table: str, names: Sequence[str], version: int | None = None
) -> dict[str, int]:
    """The files of ``names`` that the table holds already (as of ``version``), with their
    batch ids."""
    if not names or version == ABSENT or not spark.catalog.tableExists(table):
        return {}
    rows = (
        table_as_of(spark, table, version)
        .where(F.col(SOURCE_FILE).isin(*names))
        .groupBy(SOURCE_FILE)
        .agg(F.min(BATCH).alias(BATCH))
        .collect()
    )
    found = {row[SOURCE_FILE]: row[BATCH] for row in rows}
    return {name: found[name] for name in names if name in found}  # in the files' order


def _land(
    spark: SparkSession,
    table: str,
    files: Sequence[Path | str],
    read: Callable[[Path | str], DataFrame],
) -> Landing:
    """Append the files ``table`` does not hold yet as its next batch ids, in one Delta commit.

    A file is known by its location: landing it again is skipped (and said). The commit is a
    load of the table's landing sequence (:mod:`spark_cdc.core.idempotent_loads`) numbered by its
    first batch id, so two landings that overlap never give one batch id twice or land one file
    twice: the second fails, having landed nothing."""
    ensure_schema(spark, table)
    names = [landed_name(path) for path in files]
    # The files landed and the next batch id are read from one version of the table: read from
    # two, a landing that commits between them would have its files taken again under later
    # batch ids (a load number it never used, so Delta would not refuse it).
    version = latest_version(spark, table)
    skipped = _landed_before(spark, table, names, version)
    new = [path for path, name in zip(files, names, strict=True) if name not in skipped]
    if not new:
        return Landing([], skipped)
    first = next_batch_id(spark, table, version)
    landed = None
    for offset, path in enumerate(new):
        batch = read(path).withColumn(BATCH, F.lit(first + offset).cast("long"))
        landed = batch if landed is None else landed.unionByName(batch)
    assert landed is not None
    append_batches(spark, table, landed, first, first + len(new) - 1)
    return Landing(list(range(first, first + len(new))), skipped)


def append_batches(
    spark: SparkSession, table: str, landed: DataFrame, first: int, last: int | None = None
) -> None:
    """Append ``landed`` (its rows with their ``_batch_id``, from ``first`` to ``last``, which
    is ``first`` when None) to ``table`` in one Delta commit: a load of the table's landing
    sequence numbered by ``first``, so that of two landings that overlap, the second fails
    (LandingConflictError), having landed nothing. The commit records ``last``
    (next_batch_id reads it)."""
    now = datetime.now(UTC).replace(tzinfo=None)
    last = first if last is None else last
    receipt = json.dumps({LANDING_KEY: uuid.uuid4().hex, LAST_BATCH_KEY: last})
    landed = landed.withColumn("_ingested_at", F.lit(now))
    # Created empty first (spark_cdc.core.orphan_tables): every landing, the first too, is an
    # append to a registered table, checked for its receipt below.
    create_empty(spark, table, landed.schema)
    writer = (
        landed.write.format("delta")
        .mode("append")
        .option("mergeSchema", "true")
        .option("txnAppId", load_identity("landing", table))
        .option("txnVersion", first)
        .option("userMetadata", receipt)
    )
    try:
        writer.saveAsTable(table)
    except Exception as error:
        # Another landing's commit came first (its claim of the same number, or the table's
        # creation when both found no table): this one committed nothing.
        if is_overlap(error) or any(marker in str(error) for marker in METADATA_CHANGED):
            raise _conflict(table) from error
        raise
    # Delta skips, without an error, a load whose number another landing committed first.
    if not _committed(spark, table, receipt):
        raise _conflict(table)
    _record_last_batch(spark, table, last)


def _record_last_batch(spark: SparkSession, table: str, last: int) -> None:
    """Set the table's ``LAST_BATCH_PROPERTY`` to ``last`` unless it records a later one. A
    landing killed before this keeps its number in its commit's ``userMetadata``, which the next
    landing reads and records in turn."""
    recorded = recorded_last_batch(spark, table)
    if recorded is None or recorded < last:
        spark.sql(f"alter table {table} set tblproperties ('{LAST_BATCH_PROPERTY}' = '{last}')")


def _committed(spark: SparkSession, table: str, receipt: str) -> bool:
    """Whether one of the table's latest commits carries ``receipt`` (this landing's)."""
    recent = spark.sql(f"describe history {table} limit 20").select("userMetadata").collect()
    return any(row.userMetadata == receipt for row in recent)


def _conflict(table: str) -> LandingConflictError:
    return LandingConflictError(
        f"{table}: another landing committed the next batch ids while this one ran; this one "
        "landed nothing. Run it again: the files already landed are skipped."
    )


class InitialRowsError(ValueError):
    """Existing rows that cannot be loaded as they are; nothing was written."""


def read_initial_rows(spark: SparkSession, path: Path | str, schema: TargetSchema) -> DataFrame:
    """The existing rows of a JSON-lines file, typed, with the reason each bad row is bad
    (``_landing_error``: malformed_json, null_key:<col>, cast_failed:<col>,
    invalid_created_at, invalid_updated_at)."""
    lines = spark.read.text(spark_location(path)).where(F.trim(F.col("value")) != "")
    names = [*schema.columns, "created_at", "updated_at"]
    parsed = F.from_json("value", ", ".join(f"`{name}` string" for name in names))
    staged = lines.select("value", parsed.alias("p"))
    typed = {c: F.col(f"p.`{c}`").try_cast(t) for c, t in schema.columns.items()}
    stamps = {c: F.try_to_timestamp(F.col(f"p.{c}")) for c in ("created_at", "updated_at")}
    checks = [(~is_strict_json(F.col("value")), "malformed_json")]
    checks += [(F.col(f"p.`{k}`").isNull(), f"null_key:{k}") for k in schema.keys]
    checks += [
        (F.col(f"p.`{c}`").isNotNull() & typed[c].isNull(), f"cast_failed:{c}")
        for c in schema.columns
    ]
    checks += [(F.col(f"p.{c}").isNotNull() & stamps[c].isNull(), f"invalid_{c}") for c in stamps]
    error = F.when(checks[0][0], F.lit(checks[0][1]))
    for condition, reason in checks[1:]:
        error = error.when(condition, F.lit(reason))
    return staged.select(
        *(typed[c].alias(c) for c in schema.columns),
        *(stamps[c].alias(c) for c in stamps),
        error.alias(LANDING_ERROR),
        F.col("value").alias(RAW_RECORD),
    )


def land_initial_rows(spark: SparkSession, table: str, path: Path, schema: TargetSchema) -> int:
    """Replace ``table`` with the existing rows of a generated stream (initial_state.jsonl).

    The existing rows are the state the events apply to, so they load whole or not at all: a
    row that cannot be read as it is (not JSON, a NULL key, a value or timestamp that does not
    cast) refuses the load with :class:`InitialRowsError`, naming up to five such lines."""
    rows = read_initial_rows(spark, path, schema).cache()
    try:
        bad = rows.where(F.col(LANDING_ERROR).isNotNull())
        shown = bad.select(LANDING_ERROR, F.substring(RAW_RECORD, 1, 200)).limit(5).collect()
        if shown:
            count = bad.count()
            lines = "; ".join(f"{reason}: {line}" for reason, line in shown)
            raise InitialRowsError(
                f"{path}: {count} existing row(s) cannot be loaded, nothing was written "
                f"(first {len(shown)}: {lines})"
            )
        ensure_schema(spark, table)
        loaded = rows.drop(LANDING_ERROR, RAW_RECORD)
        create_empty(spark, table, loaded.schema)  # an orphan of a killed first load replaced
        loaded.write.format("delta").mode("overwrite").option(
            "overwriteSchema", "true"
        ).saveAsTable(table)
    finally:
        rows.unpersist()
    return spark.table(table).count()
