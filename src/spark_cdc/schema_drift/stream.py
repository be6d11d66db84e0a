"""Schema drift as a Structured Streaming query: the landing folder read as a file stream (or a
Kafka topic, :mod:`spark_cdc.schema_drift.kafka_source`), each micro-batch taken in by the
functions the dbt models call, into the same tables.

Per micro-batch (``foreachBatch``), in this order, as one dbt build of the feed would:

1. bronze: the batch's lines of files bronze does not hold yet, as the next load
   (:func:`~spark_cdc.schema_drift.bronze.bronze_increment`), appended;
2. registry: the loads not registered yet, merged on (event type, variation hash)
   (:func:`~spark_cdc.schema_drift.registry.registry_increment`), before silver reads it;
3. silver: every event type the loads touched brought up to the registry (created, appended or
   rebuilt, :func:`~spark_cdc.schema_drift.silver.refresh_silver`), its log rows appended.

Each step decides from the tables what it still has to do (files taken, loads registered, loads
logged per event type); the log appends are idempotent writes keyed by the query's checkpoint
and the batch id (Delta ``txnAppId``/``txnVersion``), and bronze's append is a load of bronze's
own load sequence (:mod:`spark_cdc.core.idempotent_loads`), shared with the dbt model: a batch
replayed after a kill at any point writes what it had not written, once. ``dbt build`` of the
feed and the stream can take turns on the tables, or run at once: each takes in only the files
the other has not, and of two loads that overlap, one is refused (the stream retries it).

Event groups (:mod:`spark_cdc.schema_drift.event_groups`): the feed's query then stops after
step 2 (``ingest_only``) and each group runs step 3 for its own event types in a query of its
own over bronze (:func:`start_group_stream`: bronze read as a Delta stream, its own checkpoint,
silver log and monitoring tables), in this process or any other, on this engine or another: a
group that fails stops alone, and a new event type joins its group without a restart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import random
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from spark_cdc.core.idempotent_loads import (
    carries_receipt,
    is_overlap,
    is_write_conflict,
    load_identity,
    new_receipt,
    next_load,
    write_options,
)
from spark_cdc.core.orphan_tables import create_empty
from spark_cdc.core.streaming_queries import is_connect, start_query
from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.event_groups import Grouping
from spark_cdc.schema_drift.grouping_table import record_grouping, refuse_ungrouped
from spark_cdc.schema_drift.kafka_source import KafkaSource, kafka_lines
from spark_cdc.schema_drift.registry import KEY, registered_through, registry_increment
from spark_cdc.schema_drift.silver import METADATA_COLUMNS, refresh_silver, write_guard
from spark_cdc.schema_drift.stream_monitor import ProgressRecorder, batch_latencies
from spark_cdc.schema_drift.stream_stop import BatchGate, is_requested_stop, quiet_query_end

# A stream's process id (the load_id of the bronze rows it takes in): this prefix, then a new
# uuid per start of the query.
STREAM_PROCESS_PREFIX = "stream-"


@dataclass(frozen=True)
class FeedTables:
    """The tables of one JSON feed, as its dbt models name them."""

    schema: str
    feed: str
    silver_prefix: str
    # An event group's own tables (its silver log and monitoring) end in ``__<group>``.
    group: str | None = None

    def _name(self, model: str) -> str:
        return f"{self.schema}.{model}"

    def _own(self, model: str) -> str:
        return self._name(model if self.group is None else f"{model}__{self.group}")

    def of_group(self, group: str) -> FeedTables:
        """The tables of the event group ``group`` (bronze and the registry are the feed's)."""
        return dataclasses.replace(self, group=group)

    @property
    def event_groups(self) -> str:
        return self._name(f"schema_drift__{self.feed}_event_groups")

    @property
    def bronze(self) -> str:
        return self._name(f"int_schema_drift__{self.feed}_bronze")

    @property
    def registry(self) -> str:
        return self._name(f"schema_drift__{self.feed}_registry")

    @property
    def silver_loads(self) -> str:
        return self._own(f"schema_drift__{self.feed}_silver_loads")

    @property
    def stream_batches(self) -> str:
        return self._own(f"schema_drift__{self.feed}_stream_batches")

    @property
    def stream_progress(self) -> str:
        return self._own(f"schema_drift__{self.feed}_stream_progress")


def folder_name(path: Column) -> Column:
    """The name of the folder holding the file at ``path`` (the segment before its last ``/``),
    as the feed's staging view computes it: a substring search, not a regular expression (it
    runs for every line; a regular expression retried from each character of the path)."""
    return F.substring_index(F.substring_index(path, "/", -2), "/", 1)


def landing_lines(spark: SparkSession, root: str, max_files_per_trigger: int | None) -> DataFrame:
    """The landing folder as a stream of lines: what the feed's staging view selects (payload,
    source file, its modification time, its folder as batch id)."""
    reader = (
        spark.readStream.format("text")
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.jsonl")
    )
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    lines = reader.load(root)
    return lines.select(
        F.col("value").alias("payload"),
        F.col("_metadata.file_path").alias("source_file"),
        F.col("_metadata.file_modification_time").alias("file_modified_at"),
        folder_name(F.col("_metadata.file_path")).alias("batch_id"),
    )


_BRONZE_ATTEMPTS = 3
# A refresh writes one table after another: a writer at work on the same tables can conflict
# with several of them in turn, so a conflicted refresh waits a random while before it reads the
# log again (the two writers then fall out of step).
_SILVER_ATTEMPTS = 8
_SILVER_BACKOFF_S = 1.0


class BronzeLoadSkippedError(RuntimeError):
    """Every attempt of a micro-batch's bronze load was skipped by Delta: nothing was lost (the
    batch fails, so its checkpoint does not move on)."""


def _table_or_none(spark: SparkSession, name: str) -> DataFrame | None:
    return spark.table(name) if spark.catalog.tableExists(name) else None


def _append(frame: DataFrame, table: str, app_id: str, batch_id: int) -> None:
    """Append once per (query, batch): Delta skips a write whose transaction it already holds."""
    create_empty(frame.sparkSession, table, frame.schema)
    (
        frame.write.format("delta")
        .mode("append")
        .option("txnAppId", app_id)
        .option("txnVersion", batch_id)
        .saveAsTable(table)
    )


def _load_bronze(
    spark: SparkSession, lines: DataFrame, table: str, process_id: str, folders: list[str]
) -> None:
    """Append the batch's lines of files bronze does not hold yet as bronze's next load.

    A load of bronze's load sequence (:mod:`spark_cdc.core.idempotent_loads`), shared with the
    dbt model: a replayed batch finds its files taken (by path) and adds nothing, and a
    ``dbt build`` that took some of the same files at the same time makes one of the two loads
    fail, here retried from a fresh read of bronze. A build that committed the same number
    before this write makes Delta skip it without an error: the write's receipt, missing from
    bronze's history, says so, and the batch is taken in again the same way."""
    identity = load_identity("bronze", table)
    for attempt in range(1, _BRONZE_ATTEMPTS + 1):
        number = next_load(spark, table)  # before bronze is read
        increment = bronze_increment(lines, _table_or_none(spark, table), process_id, folders)
        # Created empty first (spark_cdc.core.orphan_tables): every load, the first too, is an
        # append to a registered table that claims its number.
        create_empty(spark, table, increment.schema)
        receipt = new_receipt()
        writer = increment.write.format("delta").mode("append")
        writer = writer.options(**write_options(identity, number, receipt))
        try:
            writer.saveAsTable(table)
        except Exception as error:
            if not is_overlap(error) or attempt == _BRONZE_ATTEMPTS:
                raise
            continue
        if carries_receipt(spark, table, receipt):
            return
        if attempt == _BRONZE_ATTEMPTS:
            raise BronzeLoadSkippedError(
                f"{table}: Delta skipped this batch's bronze load {_BRONZE_ATTEMPTS} times "
                "(other loads committed its number first); the batch fails and is taken in "
                "again when the query restarts"
            )


def _merge_registry(spark: SparkSession, rows: DataFrame, table: str, batch_id: int) -> None:
    """Merge the registry increment on (event type, variation hash), in SQL (the same on a
    session and on Spark Connect)."""
    create_empty(spark, table, rows.schema)
    view = f"spark_cdc_registry_increment_{batch_id}"
    rows.createOrReplaceTempView(view)
    condition = " and ".join(f"t.{name} = s.{name}" for name in KEY)
    try:
        spark.sql(
            f"merge into {table} t using {view} s on {condition} "
            "when matched then update set * when not matched then insert *"
        )
    finally:
        spark.catalog.dropTempView(view)


def take_in_batch(
    spark: SparkSession,
    lines: DataFrame,
    batch_id: int,
    tables: FeedTables,
    app_id: str,
    process_id: str,
    silver: bool = True,
) -> None:
    """One micro-batch: bronze, then the registry, then (``silver``) silver and its log; then
    its monitoring rows."""
    # Read once: bronze takes the lines, the monitoring their files (and Spark's progress
    # report counts each line once).
    with _persisted(lines) as kept:
        _take_in(spark, kept, batch_id, tables, app_id, process_id, silver)


@contextlib.contextmanager
def _persisted(frame: DataFrame) -> Iterator[DataFrame]:
    """``frame`` persisted for the block: a micro-batch's input read once by its steps."""
    kept = frame.persist()
    try:
        yield kept
    finally:
        kept.unpersist()


def _take_in(
    spark: SparkSession,
    lines: DataFrame,
    batch_id: int,
    tables: FeedTables,
    app_id: str,
    process_id: str,
    silver: bool,
) -> None:
    spark.sql(f"create schema if not exists {tables.schema}")
    if silver:  # before bronze: a refused batch writes nothing
        refuse_ungrouped(spark, tables.event_groups, f"the {tables.feed} stream")
    # The batch's folders (batch ids, short enough for Delta's file statistics), said as a
    # literal: data skipping leaves bronze's other loads unread, however long it grows.
    folders = [row.batch_id for row in lines.select("batch_id").distinct().collect()]
    _load_bronze(spark, lines, tables.bronze, process_id, folders)
    bronze = spark.table(tables.bronze)
    registry_rows = registry_increment(
        spark, bronze, _table_or_none(spark, tables.registry), process_id, METADATA_COLUMNS
    )
    if not registry_rows.isEmpty() or not spark.catalog.tableExists(tables.registry):
        _merge_registry(spark, registry_rows, tables.registry, batch_id)
    if silver:
        _refresh_silver(
            spark, bronze, spark.table(tables.registry), tables, app_id, batch_id, process_id
        )
    # The events of this batch's files that a stream took in (now, or an attempt killed after
    # bronze): files that a dbt build took in first are not this batch's.
    files = F.broadcast(lines.select("source_file").distinct())
    events = (
        spark.table(tables.bronze)
        .where(F.col("batch_id").isin(folders))
        .join(files, "source_file")
        .where(F.col("load_id").startswith(STREAM_PROCESS_PREFIX))
    )
    latencies = batch_latencies(events, batch_id, process_id)
    _append(latencies, tables.stream_batches, f"{app_id}/stream_batches", batch_id)


def _refresh_silver(
    spark: SparkSession,
    bronze: DataFrame,
    registry: DataFrame,
    tables: FeedTables,
    app_id: str,
    batch_id: int,
    process_id: str,
) -> None:
    """Silver of the event types in ``registry`` brought up to it, its log rows appended once
    per batch (the log of ``tables``: the feed's, or its group's). A write that another writer
    of the same table (a ``dbt build``) made conflict wrote nothing to it: the refresh is taken
    again from the log as it is then."""
    for attempt in range(1, _SILVER_ATTEMPTS + 1):
        log_before = _table_or_none(spark, tables.silver_loads)
        try:
            log = refresh_silver(
                spark,
                bronze,
                registry,
                log_before,
                tables.schema,
                tables.silver_prefix,
                process_id,
                guard=None if log_before is None else write_guard(spark, tables.bronze),
            )
        except Exception as error:
            if not is_write_conflict(error) or attempt == _SILVER_ATTEMPTS:
                raise
            time.sleep(random.uniform(0, _SILVER_BACKOFF_S * attempt))
            continue
        _append(log, tables.silver_loads, f"{app_id}/silver_loads", batch_id)
        return


# How long a group's micro-batch waits for the registry to take in the bronze loads it holds
# (the ingest query merges the registry right after its bronze append), in seconds.
REGISTRY_WAIT_S = 60.0


def _registered(spark: SparkSession, table: str, load_seq: int, wait_s: float) -> None:
    """Wait until the registry holds bronze's load ``load_seq``, ``wait_s`` at most (the later
    loads are left to the group's next micro-batch)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if spark.catalog.tableExists(table) and registered_through(spark.table(table)) >= load_seq:
            return
        time.sleep(0.5)


def take_in_group_batch(
    spark: SparkSession,
    rows: DataFrame,
    batch_id: int,
    tables: FeedTables,
    grouping: Grouping,
    app_id: str,
    process_id: str,
) -> None:
    """One micro-batch of an event group's query over bronze: the silver tables of the group's
    event types brought up to the registry, the group's log and latency rows appended."""
    assert tables.group is not None
    # Read once: the highest load, then the latencies (and Spark counts each row once).
    with _persisted(rows) as kept:
        highest = kept.agg(F.max("load_seq")).first()[0]
        if highest is None:
            return
        _registered(spark, tables.registry, int(highest), REGISTRY_WAIT_S)
        registry = spark.table(tables.registry)
        known = [row.event_type for row in registry.select("event_type").distinct().collect()]
        types = grouping.types_of(tables.group, known)  # read each batch: new types join here
        ours = F.col("event_type").isin(types)
        bronze = spark.table(tables.bronze)
        through = registered_through(registry)
        _refresh_silver(
            spark, bronze.where(ours), registry.where(ours), tables, app_id, batch_id, process_id
        )
        taken = ours & (F.col("load_seq") <= through) & F.col("parse_error").isNull()
        latencies = batch_latencies(kept.where(taken), batch_id, process_id)
        _append(latencies, tables.stream_batches, f"{app_id}/stream_batches", batch_id)


@dataclass
class StreamRun:
    """A started query and the recorder of its progress."""

    spark: SparkSession
    query: StreamingQuery
    recorder: ProgressRecorder
    tables: FeedTables
    # The Prometheus endpoint's port (``metrics_port``), None without one.
    metrics_port: int | None = None
    # What the micro-batches pass through on a session (stop between batches, :meth:`stop`).
    gate: BatchGate = dataclasses.field(default_factory=BatchGate)

    def stop(self) -> None:
        """Stop the query between two micro-batches: after the one in progress (its writes
        done), before the next (refused: the next run takes it in). The query is interrupted
        only while it waits for its next trigger (an interrupt while it writes its checkpoint
        is harmless but logged)."""
        self.gate.close()
        if not is_connect(self.spark):  # the refused batch ends the query: not an error to log
            quiet_query_end(self.spark)
        while self.query.isActive:
            if not self.query.status["isTriggerActive"]:
                self.query.stop()
                return
            time.sleep(0.2)

    def failure(self) -> BaseException | None:
        """The query's failure, if it failed other than by :meth:`stop`."""
        error = self.query.exception()
        return None if self.gate.closed and is_requested_stop(error) else error

    def close_metrics(self) -> None:
        """Stop serving the metrics endpoint (if any)."""
        if self.recorder.metrics is not None:
            self.recorder.metrics.close()

    def finish(self) -> int:
        """After the query stopped: its last progress reports written, the listener removed;
        how many reports were written."""
        # Listener events arrive asynchronously: the last progress report comes before the
        # termination event.
        self.recorder.terminated.wait(timeout=30)
        self.spark.streams.removeListener(self.recorder)
        return self.recorder.flush(self.spark, self.tables.stream_progress)


def _connect_batch(
    lines: DataFrame,
    batch_id: int,
    *,
    tables: FeedTables,
    app_id: str,
    process_id: str,
    silver: bool,
) -> None:
    """foreachBatch on Spark Connect: runs in the server's Python worker, on its session."""
    take_in_batch(lines.sparkSession, lines, batch_id, tables, app_id, process_id, silver)


def _connect_group_batch(
    rows: DataFrame,
    batch_id: int,
    *,
    tables: FeedTables,
    grouping: Grouping,
    app_id: str,
    process_id: str,
) -> None:
    """An event group's foreachBatch on Spark Connect (in the server's Python worker)."""
    take_in_group_batch(rows.sparkSession, rows, batch_id, tables, grouping, app_id, process_id)


def start_stream(
    spark: SparkSession,
    root: str,
    tables: FeedTables,
    checkpoint: Path,
    *,
    available_now: bool = False,
    trigger_interval: str = "30 seconds",
    max_files_per_trigger: int | None = None,
    after_batch: Callable[[int], None] | None = None,
    metrics_port: int | None = None,
    metrics_address: str = "127.0.0.1",
    kafka: KafkaSource | None = None,
    ingest_only: bool = False,
) -> StreamRun:
    """Start the query (``available_now``: take in what is landed, then stop) on the landing
    folder ``root``, or on ``kafka``'s topics when given; ``ingest_only``: bronze and the
    registry only (silver is left to the feed's event groups, :func:`start_group_stream`). With
    ``metrics_port`` (0: a free port) its progress is also served as Prometheus metrics
    (:mod:`spark_cdc.schema_drift.stream_metrics`) until :meth:`StreamRun.close_metrics`.

    On a session, each micro-batch runs in this process and ``after_batch`` after it; on Spark
    Connect the batch runs in the server's Python worker (:func:`check_server_python` first),
    and the progress reports and ``after_batch`` are handled here as each report arrives."""
    process_id = f"{STREAM_PROCESS_PREFIX}{uuid.uuid4()}"
    # The checkpoint names the query: replays of its batches after a restart are recognized.
    app_id = f"spark_cdc.schema_drift/{checkpoint.resolve()}"
    silver = not ingest_only
    if silver:  # refused before it starts (and again by each batch)
        refuse_ungrouped(spark, tables.event_groups, f"the {tables.feed} stream")

    def each_batch(lines: DataFrame, batch_id: int) -> None:
        take_in_batch(lines.sparkSession, lines, batch_id, tables, app_id, process_id, silver)

    remote_batch = functools.partial(
        _connect_batch, tables=tables, app_id=app_id, process_id=process_id, silver=silver
    )
    lines = (
        kafka_lines(spark, kafka)
        if kafka is not None
        else landing_lines(spark, root, max_files_per_trigger)
    )
    return _start(
        spark,
        lines,
        each_batch,
        remote_batch,
        f"schema_drift_{tables.feed}",
        tables,
        checkpoint,
        process_id,
        available_now=available_now,
        trigger_interval=trigger_interval,
        after_batch=after_batch,
        metrics_port=metrics_port,
        metrics_address=metrics_address,
        query="ingest" if ingest_only else "feed",
    )


# What a group's query reads of bronze's new rows (its batches read silver's input from bronze).
_GROUP_INPUT = ["load_seq", "event_type", "parse_error", "file_modified_at"]


def start_group_stream(
    spark: SparkSession,
    tables: FeedTables,
    grouping: Grouping,
    checkpoint: Path,
    *,
    available_now: bool = False,
    trigger_interval: str = "30 seconds",
    after_batch: Callable[[int], None] | None = None,
    metrics_port: int | None = None,
    metrics_address: str = "127.0.0.1",
    bronze_wait_s: float = 600.0,
    max_files_per_trigger: int | None = None,
) -> StreamRun:
    """Start the query of the event group ``tables.group``: bronze read as a Delta stream, each
    micro-batch bringing the silver tables of the group's event types up to the registry.

    The grouping is recorded first (a start with another grouping is refused). Each group has
    its own checkpoint, log and monitoring tables: a group that fails stops alone, and is
    restarted alone. A new event type joins its group's next micro-batch (membership is decided
    from the registry in each batch). Started before the feed's bronze exists, it waits for it
    (``bronze_wait_s`` at most). ``max_files_per_trigger`` bounds a micro-batch by bronze's
    data files (Delta's own option). Otherwise as :func:`start_stream`."""
    if tables.group is None:
        raise ValueError("start_group_stream needs the tables of a group (FeedTables.of_group)")
    grouping.group(tables.group)  # a group the grouping has
    deadline = time.monotonic() + bronze_wait_s
    while not spark.catalog.tableExists(tables.bronze):  # a group may start before the ingest
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{tables.bronze} does not exist after {bronze_wait_s:.0f} s: start the feed's "
                "ingest query (or dbt build) for its groups to read"
            )
        time.sleep(1.0)
    record_grouping(spark, tables.event_groups, grouping)
    process_id = f"{STREAM_PROCESS_PREFIX}{uuid.uuid4()}"
    app_id = f"spark_cdc.schema_drift/{checkpoint.resolve()}"

    def each_batch(rows: DataFrame, batch_id: int) -> None:
        session = rows.sparkSession
        take_in_group_batch(session, rows, batch_id, tables, grouping, app_id, process_id)

    remote_batch = functools.partial(
        _connect_group_batch,
        tables=tables,
        grouping=grouping,
        app_id=app_id,
        process_id=process_id,
    )
    reader = spark.readStream.format("delta")
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    rows = reader.table(tables.bronze).select(*_GROUP_INPUT)
    return _start(
        spark,
        rows,
        each_batch,
        remote_batch,
        f"schema_drift_{tables.feed}__{tables.group}",
        tables,
        checkpoint,
        process_id,
        available_now=available_now,
        trigger_interval=trigger_interval,
        after_batch=after_batch,
        metrics_port=metrics_port,
        metrics_address=metrics_address,
        query=tables.group,
    )


def _start(
    spark: SparkSession,
    source: DataFrame,
    each_batch: Callable[[DataFrame, int], None],
    remote_batch: Callable[[DataFrame, int], None],
    name: str,
    tables: FeedTables,
    checkpoint: Path,
    process_id: str,
    *,
    available_now: bool,
    trigger_interval: str,
    after_batch: Callable[[int], None] | None,
    metrics_port: int | None,
    metrics_address: str,
    query: str,
) -> StreamRun:
    """Start ``source``'s query with its listener (and metrics endpoint, where it is labelled
    ``query``): ``each_batch`` on a session, ``remote_batch`` on Spark Connect."""
    remote = is_connect(spark)
    if remote:  # before the metrics endpoint: a refused start leaves no thread or port behind
        check_server_python(spark)
    metrics, served = None, None
    if metrics_port is not None:
        from spark_cdc.schema_drift.stream_metrics import StreamMetrics

        metrics = StreamMetrics(tables.feed, query)
        served = metrics.serve(metrics_port, metrics_address)
    recorder = ProgressRecorder(name, checkpoint / "status.json", process_id, metrics)
    if remote:
        recorder.write_each_report(spark, tables.stream_progress, after_batch)
    spark.streams.addListener(recorder)

    gate = BatchGate()

    def local_batch(frame: DataFrame, batch_id: int) -> None:
        with gate.batch():
            recorder.flush(frame.sparkSession, tables.stream_progress)  # earlier batches' reports
            each_batch(frame, batch_id)
            if after_batch is not None:
                after_batch(batch_id)

    writer = (
        source.writeStream.queryName(name)
        .option("checkpointLocation", str(checkpoint))
        .foreachBatch(remote_batch if remote else local_batch)
    )
    writer = (
        writer.trigger(availableNow=True)
        if available_now
        else writer.trigger(processingTime=trigger_interval)
    )
    try:
        query = start_query(writer, remote)
    except Exception:
        if metrics is not None:  # no query to report on: the endpoint goes with it
            metrics.close()
        spark.streams.removeListener(recorder)
        raise
    return StreamRun(spark, query, recorder, tables, served, gate)


class ServerPythonError(RuntimeError):
    """The Spark Connect server cannot run the stream's micro-batches in Python."""


def _server_python() -> str:
    """In the server's Python worker: its version, and whether it has the project's package."""
    import platform

    try:
        import spark_cdc  # noqa: F401
    except ImportError:
        return f"{platform.python_version()} without spark_cdc"
    return platform.python_version()


def server_python_problem(client: str, server: str) -> str | None:
    """Why a server whose Python workers report ``server`` cannot run this client's
    micro-batches (None when it can): another minor version, or no spark_cdc there."""
    if server.split(".")[:2] == client.split(".")[:2] and "without" not in server:
        return None
    return (
        f"the Spark Connect server's Python workers run Python {server}; this client runs "
        f"Python {client}: foreachBatch needs the same minor version on both, with spark_cdc "
        "installed on the server (set PYSPARK_PYTHON for the server)"
    )


def check_server_python(spark: SparkSession) -> str:
    """The Python version of the Connect server's workers, checked against this client's:
    foreachBatch runs the stream's code there, so the minor versions must match and the
    worker's Python must have spark_cdc (and its pinned pyspark) installed."""
    import platform

    from pyspark.errors import PySparkException
    from pyspark.sql.types import StringType

    client = platform.python_version()
    probe = F.udf(_server_python, StringType())
    try:
        server = spark.range(1).select(probe()).first()[0]
    except PySparkException as error:
        first = str(error).strip().splitlines()[0]
        raise ServerPythonError(
            f"the Spark Connect server could not run Python {client} code for the stream's "
            f"micro-batches ({first}): its Python workers (PYSPARK_PYTHON on the server) must be "
            f"Python {'.'.join(client.split('.')[:2])} with spark_cdc installed"
        ) from None
    problem = server_python_problem(client, server)
    if problem:
        raise ServerPythonError(problem)
    return server
