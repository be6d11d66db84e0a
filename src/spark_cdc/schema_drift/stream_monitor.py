"""Monitoring of a schema-drift stream: what each micro-batch took in and how fast.

Two Delta tables beside the feed's tables, both appended once per micro-batch:

- ``schema_drift__<feed>_stream_batches`` (written in ``foreachBatch``, after silver): per batch
  and event type, the events taken in, and their latency from landing (the file's modification
  time) to the silver commit (p50, p95, max seconds);
- ``schema_drift__<feed>_stream_progress`` (from a ``StreamingQueryListener``): per batch, the
  input rows, input and processing rates and the batch's duration, as Spark reports them.

The listener only queues the progress reports and writes a small status file (the latest
figures, for ``spark-cdc stream status`` while the stream runs); the queued reports are written
to the progress table by the query's own thread at the start of the next micro-batch and when
the query stops, never from Spark's listener thread. On Spark Connect the micro-batches run in
the server's Python worker and listener events reach the client on a thread of its own: there
each report is written as it arrives.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.types import (
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from spark_cdc.core.orphan_tables import create_empty

PROGRESS_SCHEMA = StructType(
    [
        StructField("query_id", StringType(), False),
        StructField("run_id", StringType(), False),
        StructField("batch_id", LongType(), False),
        StructField("reported_at", TimestampNTZType(), False),
        StructField("input_rows", LongType(), False),
        StructField("input_rows_per_second", DoubleType(), True),
        StructField("processed_rows_per_second", DoubleType(), True),
        StructField("batch_duration_ms", LongType(), True),
        StructField("process_id", StringType(), True),
    ]
)


def batch_latencies(new_events: DataFrame, batch_id: int, process_id: str) -> DataFrame:
    """Per event type: events taken in by the batch and their landing-to-silver latency, as of
    now (called right after the batch's silver commit)."""
    now = F.current_timestamp()
    latency = (F.unix_micros(now) - F.unix_micros(F.col("file_modified_at"))) / 1_000_000
    return (
        new_events.withColumn("_latency", latency)
        .groupBy(F.coalesce("event_type", F.lit("(unknown)")).alias("event_type"))
        .agg(
            F.count(F.lit(1)).alias("events"),
            F.percentile_approx("_latency", 0.5).alias("latency_p50_s"),
            F.percentile_approx("_latency", 0.95).alias("latency_p95_s"),
            F.max("_latency").alias("latency_max_s"),
        )
        .select(
            F.lit(batch_id).cast("long").alias("batch_id"),
            "event_type",
            "events",
            "latency_p50_s",
            "latency_p95_s",
            "latency_max_s",
            F.localtimestamp().alias("committed_at"),
            F.lit(process_id).alias("process_id"),
        )
    )


def _reported_at(text: str) -> datetime:
    """Spark's progress timestamp (ISO, UTC, ``Z``) as a zone-less UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).replace(tzinfo=None)


def progress_row(progress: Any, process_id: str) -> tuple:
    """One row of the progress table from a ``StreamingQueryProgress``."""
    durations = progress.durationMs or {}
    return (
        str(progress.id),
        str(progress.runId),
        int(progress.batchId),
        _reported_at(progress.timestamp),
        int(progress.numInputRows),
        float(progress.inputRowsPerSecond),
        float(progress.processedRowsPerSecond),
        int(durations.get("triggerExecution", 0)),
        process_id,
    )


class ProgressRecorder(StreamingQueryListener):
    """Queues the progress reports of one query and keeps its status file current."""

    def __init__(
        self, query_name: str, status_file: Path, process_id: str, metrics: Any = None
    ) -> None:
        self.query_name = query_name
        # A StreamMetrics (stream_metrics) told of each report that took in lines, or None.
        self.metrics = metrics
        self.status_file = status_file
        self.process_id = process_id
        self.pending: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self.query_id: str | None = None
        # Set by the query's termination event, which Spark posts after its last progress.
        self.terminated = threading.Event()
        self._writes_to: tuple[SparkSession, str] | None = None
        # Reports taken off the queue whose append failed: written first by the next flush.
        self._unwritten: list[tuple] = []
        self._flushing = threading.Lock()
        self._after_batch: Callable[[int], None] | None = None

    def write_each_report(
        self, spark: SparkSession, table: str, after_batch: Callable[[int], None] | None
    ) -> None:
        """Write each report as it arrives, then call ``after_batch`` with its batch id (on
        Spark Connect: listener events reach this client, not the query's thread)."""
        self._writes_to = (spark, table)
        self._after_batch = after_batch

    def onQueryStarted(self, event: Any) -> None:
        if event.name == self.query_name:
            self.query_id = str(event.id)
            self._status({"state": "running", "query_id": self.query_id})

    def onQueryProgress(self, event: Any) -> None:
        progress = event.progress
        if progress.name != self.query_name:
            return
        row = progress_row(progress, self.process_id)
        if row[4] > 0:
            self.pending.put(row)
            if self.metrics is not None:
                self.metrics.observe(row)
        self._status(
            {
                "state": "running",
                "query_id": row[0],
                "last_batch": row[2],
                "reported_at": row[3].isoformat(),
                "input_rows": row[4],
                "input_rows_per_second": row[5],
                "processed_rows_per_second": row[6],
                "batch_duration_ms": row[7],
            }
        )
        if self._writes_to is not None and row[4] > 0:
            self.flush(*self._writes_to)
            if self._after_batch is not None:
                self._after_batch(row[2])

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        if str(event.id) != self.query_id:
            return
        status = json.loads(self.status_file.read_text()) if self.status_file.exists() else {}
        self._status({**status, "state": "stopped", "error": event.exception})
        self.terminated.set()

    def _status(self, values: dict) -> None:
        self.status_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.status_file.with_suffix(".tmp")
        temporary.write_text(json.dumps(values, indent=2, default=str))
        temporary.replace(self.status_file)

    def flush(self, spark: SparkSession, table: str) -> int:
        """Append the queued reports to ``table``; how many. Reports whose append failed are
        kept, first in line, for the next flush (the error is raised)."""
        with self._flushing:
            rows = self._unwritten
            while not self.pending.empty():
                rows.append(self.pending.get())
            self._unwritten = []
            if not rows:
                return 0
            try:
                create_empty(spark, table, PROGRESS_SCHEMA)
                spark.createDataFrame(rows, PROGRESS_SCHEMA).write.format("delta").mode(
                    "append"
                ).saveAsTable(table)
            except Exception:
                self._unwritten = rows
                raise
            return len(rows)
