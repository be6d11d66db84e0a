"""Silver: one typed, flattened Delta table per event type, parsed with its latest superset.

A refresh takes, per event type, the bronze events of accepted variations that the registry has
taken in and the silver table does not hold yet (``load_seq`` above the last load logged for it),
parses their payloads with the latest superset (``from_json``), flattens nested objects into
``parent__child`` columns (arrays stay arrays) and writes them with the metadata columns below:

- no table yet: it is created (Delta column mapping by name, so any attribute name is a column);
- the new columns only add columns or nested attributes: the rows are appended with Delta schema
  evolution (``mergeSchema``), older rows are null in the new columns;
- a column's type widened (bigint → double → string): the table is rebuilt from bronze, all
  its events parsed with the new superset, in one atomic replace (readers never see it empty).

The log is the truth of what each table holds: the write mode is decided from the superset
version of the type's last logged load (not from the table as found), and a table is taken to
hold its loads up to the last logged one. An append replaces the rows of exactly the loads it
writes (``_load_seq`` above the last logged load, up to the highest it writes: Delta's
overwrite by a predicate, ``replaceWhere``), never a blind append. So a refresh that failed
after writing some tables (its log rows are written when it completes) is repeated without
duplicates; a second writer of a table (the stream beside a build, a build after an empty or
skipped bronze load) that read the log before the first logged its loads replaces the rows of
the loads it writes instead of adding them again, and leaves the first one's later loads alone;
and two such writes at once conflict (Delta's ``ConcurrentAppendException`` ends one, which
writes nothing to that table). A writer that read the log before another one committed a
later write of the same table (a rebuild or create with loads it never saw) must not replace
that table with fewer loads: each write carries Delta's idempotent-write pair, ``txnAppId``
(the bronze table's id, :func:`write_guard`) and ``txnVersion`` (the highest load it writes),
and Delta skips a write whose version is not above the last one committed to that table, so a
table only ever moves forward. Without a log (first run, ``--full-refresh``) existing tables
are rebuilt, unguarded. A payload that does not fit the superset would be a broken invariant
(its variation is part of it): the write fails with the payload instead of storing nulls.
"""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from spark_cdc.core.cache_slots import keep, release
from spark_cdc.core.orphan_tables import has_orphan
from spark_cdc.schema_drift.inference import FlatColumn, finalize, flatten, schema_from_json
from spark_cdc.schema_drift.registry import ACCEPTED, KEY, registered_through

METADATA_COLUMNS = (
    "_load_seq",
    "_ingested_at",
    "_source_file",
    "_batch_id",
    "_variation_hash",
    "_schema_version",
)
_UNFIT = "__payload_unfit_for_superset__"
_SIMPLE_TYPE_NAME = re.compile(r"[a-z0-9_]+")

LOG_SCHEMA = StructType(
    [
        StructField("event_type", StringType(), False),
        StructField("silver_table", StringType(), False),
        StructField("schema_version", IntegerType(), False),
        StructField("write_mode", StringType(), False),
        StructField("from_load_seq", LongType(), False),
        StructField("to_load_seq", LongType(), False),
        StructField("events_written", LongType(), False),
        StructField("column_count", IntegerType(), False),
        StructField("added_columns", ArrayType(StringType()), False),
        StructField("loaded_at", TimestampNTZType(), False),
        StructField("process_id", StringType(), True),
    ]
)


def table_suffix(event_type: str) -> str:
    """Table name part of an event type: itself when it is [a-z0-9_]+, else a sanitized name
    with the first 8 hex digits of its SHA-256 (distinct event types never share a table)."""
    if _SIMPLE_TYPE_NAME.fullmatch(event_type):
        return event_type
    readable = re.sub(r"[^a-z0-9_]+", "_", event_type.lower()).strip("_")
    digest = hashlib.sha256(event_type.encode("utf-8")).hexdigest()[:8]
    return f"{readable}_{digest}" if readable else digest


def _field(parsed: Column, path: tuple[str, ...]) -> Column:
    for name in path:
        parsed = parsed.getField(name)
    return parsed


def parse_events(events: DataFrame, superset: StructType) -> DataFrame:
    """Typed, flattened rows of events (bronze columns) parsed with a superset schema."""
    final = finalize(superset)
    columns = flatten(final if isinstance(final, StructType) else StructType([]), METADATA_COLUMNS)
    with_unfit = StructType([*(final.fields if final else []), StructField(_UNFIT, StringType())])
    parsed = F.from_json("payload", with_unfit, {"columnNameOfCorruptRecord": _UNFIT})
    unfit = F.col("_parsed").getField(_UNFIT)
    # The check is part of an output column (not a filter, which Spark could push below the
    # join that selects accepted variations): it runs exactly on the rows written.
    version = F.when(
        unfit.isNotNull(),
        F.raise_error(F.concat(F.lit("payload does not fit its superset schema: "), unfit)),
    ).otherwise(F.col("schema_version"))
    return events.withColumn("_parsed", parsed).select(
        *(_field(F.col("_parsed"), column.path).alias(column.name) for column in columns),
        F.col("load_seq").alias("_load_seq"),
        F.col("ingested_at").alias("_ingested_at"),
        F.col("source_file").alias("_source_file"),
        F.col("batch_id").alias("_batch_id"),
        F.col("variation_hash").alias("_variation_hash"),
        version.cast("int").alias("_schema_version"),
    )


def _extends(old: DataType, new: DataType) -> bool:
    """Whether ``new`` only adds attributes to ``old`` (Delta schema evolution can apply it)."""
    if isinstance(old, StructType) and isinstance(new, StructType):
        fields = {item.name: item.dataType for item in new.fields}
        return all(
            item.name in fields and _extends(item.dataType, fields[item.name])
            for item in old.fields
        )
    if isinstance(old, ArrayType) and isinstance(new, ArrayType):
        return _extends(old.elementType, new.elementType)
    return old == new


@dataclass(frozen=True)
class SilverPlan:
    """How one event type's table is written in a refresh."""

    event_type: str
    table: str
    schema_version: int
    superset: StructType
    done_through: int


def _data_columns(schema: StructType | None) -> StructType | None:
    if schema is None:
        return None
    return StructType([item for item in schema.fields if item.name not in METADATA_COLUMNS])


def _flat_columns(superset: StructType | None) -> list[FlatColumn]:
    """The data columns of a table parsed with ``superset``."""
    final = finalize(superset) if superset is not None else None
    return flatten(final if isinstance(final, StructType) else StructType([]))


def _as_struct(columns: list[FlatColumn]) -> StructType:
    return StructType([StructField(column.name, column.data_type) for column in columns])


def _write_mode(before: StructType | None, columns: list[FlatColumn]) -> str:
    """create (no table before), append (only new columns) or rebuild (a type widened)."""
    if before is None:
        return "create"
    return "append" if _extends(before, _as_struct(columns)) else "rebuild"


# Delta writes a checkpoint of a table's log every ``delta.checkpointInterval`` commits (10 by
# default, about half a second each here). Silver tables created together are appended
# together, one commit per refresh: with one interval they would all checkpoint in the same
# refresh (52 tables: about 25 s added to one micro-batch of the stream, every 10th). Each table
# gets an interval in this range from its name instead, so a refresh writes a few checkpoints;
# a reader replays at most that many small JSON commits after the last checkpoint.
CHECKPOINT_INTERVALS = range(20, 40)


def checkpoint_interval(table: str) -> int:
    """The Delta checkpoint interval of a silver table: one of :data:`CHECKPOINT_INTERVALS`,
    the same for a name in every run (the first 8 hex digits of its SHA-256)."""
    digest = int(hashlib.sha256(table.encode("utf-8")).hexdigest()[:8], 16)
    return CHECKPOINT_INTERVALS[digest % len(CHECKPOINT_INTERVALS)]


def write_guard(spark: SparkSession, bronze_table: str) -> str:
    """The ``txnAppId`` of the silver writes of ``bronze_table``'s loads: its Delta table id,
    which a replaced bronze (``--full-refresh``, whose ``load_seq`` starts again) changes."""
    return f"spark_cdc.silver/{spark.sql(f'describe detail {bronze_table}').first().id}"


def _write(
    spark: SparkSession,
    plan: SilverPlan,
    events: DataFrame,
    mode: str,
    replace: bool,
    last: int,
    guard: str | None,
) -> DataFrame:
    """Write one event type's rows (an append replaces the rows of its loads, those above
    ``plan.done_through`` up to ``last``); returns what was written. With a ``guard``, Delta
    skips the write when a write of a load at or above ``last`` is already committed."""
    rows = parse_events(events, plan.superset)
    writer = rows.writeTo(plan.table)
    if guard is not None:
        writer = writer.option("txnAppId", guard).option("txnVersion", str(last))
    if mode == "append":
        loads = (F.col("_load_seq") > F.lit(plan.done_through)) & (F.col("_load_seq") <= last)
        writer.option("mergeSchema", "true").overwrite(loads)
        return rows
    writer = writer.using("delta")
    writer = writer.tableProperty("delta.columnMapping.mode", "name")
    writer = writer.tableProperty("delta.checkpointInterval", str(checkpoint_interval(plan.table)))
    # A table a killed run committed but never registered is replaced (core.orphan_tables).
    (writer.createOrReplace() if replace or has_orphan(spark, plan.table) else writer.create())
    return rows


def _reads_whole(plan: SilverPlan, mode: str) -> bool:
    """Whether a type's table is written from all of its events (not only the pending ones): a
    rebuild, or a table created again after loads of the type were written."""
    return mode == "rebuild" or (mode == "create" and plan.done_through > 0)


def drop_started_rows(spark: SparkSession, log_table: str) -> int:
    """Delete the ``started`` rows that refreshes before this log format wrote (a marker row per
    refresh, no table); returns how many were deleted. File statistics answer the check when
    there are none (``started`` sorts after every write mode)."""
    started = spark.table(log_table).where(F.col("write_mode") == "started").count()
    if started:
        spark.sql(f"delete from {log_table} where write_mode = 'started'")
    return started


def _logged_supersets(log: DataFrame, accepted: DataFrame) -> dict[str, StructType]:
    """Per logged event type, the superset its last logged load was parsed with."""
    last = log.groupBy("event_type").agg(
        F.max_by("schema_version", "to_load_seq").alias("schema_version")
    )
    versions = accepted.groupBy("event_type", "schema_version").agg(
        F.first("superset_schema").alias("superset_schema")
    )
    return {
        row.event_type: schema_from_json(row.superset_schema)
        for row in last.join(versions, ["event_type", "schema_version"]).collect()
    }


def refresh_silver(
    spark: SparkSession,
    bronze: DataFrame,
    registry: DataFrame,
    log: DataFrame | None,
    database: str,
    prefix: str,
    process_id: str | None,
    writers: int = 4,
    guard: str | None = None,
) -> DataFrame:
    """Bring every event type's silver table up to the registry; returns this run's log rows.

    ``log`` is the log so far (None: first run or full refresh). ``writers`` event types are
    written at a time (their tables are independent). ``guard`` (:func:`write_guard`) keeps a
    writer with an older log from moving a table back; it applies only with a log."""
    guard = guard if log is not None else None
    through = registered_through(registry)
    accepted = registry.where(F.col("status") == ACCEPTED)
    latest = {
        row.event_type: (row.schema_version, row.superset_schema)
        for row in accepted.groupBy("event_type")
        .agg(F.max_by(F.struct("schema_version", "superset_schema"), "schema_version").alias("l"))
        .select("event_type", "l.*")
        .collect()
    }
    versions = accepted.select(*KEY, "schema_version")
    events = bronze.where(F.col("parse_error").isNull() & (F.col("load_seq") <= through)).join(
        F.broadcast(versions), KEY
    )
    done = {}
    if log is not None:
        through_per_type = log.groupBy("event_type").agg(F.max("to_load_seq").alias("through"))
        done = {row.event_type: row.through for row in through_per_type.collect()}
    done_frame = spark.createDataFrame(list(done.items()), "event_type string, done long")
    # No type has pending rows at or below the lowest load every accepted type is done through
    # (0 while a type has none): said as a literal, data skipping leaves bronze's older files
    # unread, so a refresh reads the new loads only, however long bronze grows.
    done_through_all = min((done.get(event_type, 0) for event_type in latest), default=0)
    needed = [
        *KEY,
        "schema_version",
        "load_seq",
        "ingested_at",
        "source_file",
        "batch_id",
        "payload",
    ]
    try:
        # Sorted by event type inside each partition, so that each cached batch holds one or a few
        # types and the per-type filters below skip the others by the cache's batch statistics.
        pending = keep(
            events.where(F.col("load_seq") > F.lit(done_through_all))
            .join(F.broadcast(done_frame), "event_type", "left")
            .where(F.col("load_seq") > F.coalesce(F.col("done"), F.lit(0)))
            .select(*needed)
            .sortWithinPartitions("event_type"),
            "schema_drift.pending",
        )
        counts = pending.groupBy("event_type").agg(
            F.min("load_seq").alias("first"),
            F.max("load_seq").alias("last"),
            F.count(F.lit(1)).alias("events"),
        )
        now = spark.sql("select localtimestamp() as now").first().now
        tables = {row.tableName for row in spark.sql(f"show tables in {database}").collect()}
        todo = sorted(counts.collect(), key=lambda r: r.event_type)
        names = {row.event_type: f"{prefix}{table_suffix(row.event_type)}" for row in todo}
        logged = {} if log is None else _logged_supersets(log, accepted)

        def plan_of(row) -> tuple[SilverPlan, StructType | None, str, bool]:
            """The type's plan, its data columns before, its write mode and whether it exists."""
            version, superset_json = latest[row.event_type]
            plan = SilverPlan(
                row.event_type,
                f"{database}.{names[row.event_type]}",
                version,
                schema_from_json(superset_json),
                done.get(row.event_type, 0),
            )
            exists = names[row.event_type].lower() in tables
            if log is None:  # first run or full refresh: the table as found, rebuilt
                before = _data_columns(spark.table(plan.table).schema) if exists else None
                mode = "rebuild" if exists else "create"
            elif row.event_type in logged and exists:
                before = _as_struct(_flat_columns(logged[row.event_type]))
                mode = _write_mode(before, _flat_columns(plan.superset))
            else:  # a table the log does not know (left by a failed refresh) is replaced
                before, mode = None, "create"
            return plan, before, mode, exists

        plans = {row.event_type: plan_of(row) for row in todo}

        # The types written from all of their events are read from bronze in one pass (each type
        # filtering bronze on its own would read all of it once per type: a widening that reaches
        # many types, or a full refresh, would read it as many times).
        whole_types = sorted(
            event_type
            for event_type, (plan, _, mode, _) in plans.items()
            if _reads_whole(plan, mode)
        )
        wholes, whole_counts = None, {}
        if whole_types:
            wholes = keep(
                events.where(F.col("event_type").isin(whole_types))
                .select(*needed)
                .sortWithinPartitions("event_type"),
                "schema_drift.whole",
            )
            # What each such table will hold (its write parses every one of these rows into one
            # row): counted once over the cached rows, not by reading each new table back.
            whole_counts = {
                row.event_type: (row.first, row.events)
                for row in wholes.groupBy("event_type")
                .agg(F.min("load_seq").alias("first"), F.count(F.lit(1)).alias("events"))
                .collect()
            }

        def refresh_one(row) -> tuple:
            plan, before, mode, exists = plans[row.event_type]
            columns = _flat_columns(plan.superset)
            source = wholes if _reads_whole(plan, mode) else pending
            rows = source.where(F.col("event_type") == row.event_type)
            written = _write(spark, plan, rows, mode, exists, row.last, guard)
            first, events_written = row.first, row.events
            if _reads_whole(plan, mode):
                first, events_written = whole_counts[row.event_type]
            known = set() if before is None else set(before.names)
            return (
                row.event_type,
                plan.table,
                plan.schema_version,
                mode,
                first,
                row.last,
                events_written,
                len(columns),
                sorted(set(written.columns) - known - set(METADATA_COLUMNS)),
                now,
                process_id,
            )

        # Each event type's table is written by its own small jobs and Delta commit, mostly driver
        # work: a few at a time keep both cores busy.
        with ThreadPoolExecutor(max_workers=writers) as pool:
            out = list(pool.map(refresh_one, todo))
    finally:  # a failed write (a conflict) leaves no frame cached
        release("schema_drift.pending")
        release("schema_drift.whole")
    return spark.createDataFrame(out, LOG_SCHEMA)
