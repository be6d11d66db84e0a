"""Stopping a running stream between its micro-batches.

``StreamingQuery.stop`` interrupts the query's thread; on a session that thread also runs the
micro-batch's Python code (py4j calls back on it), so a stop during a batch fails the batch's
next Spark call half-way and every layer prints its traceback (Spark's own Ctrl-C handler is
worse: it cancels every job). :class:`BatchGate` lets a stop wait for the batch in progress: each
micro-batch runs inside :meth:`BatchGate.batch`; :meth:`BatchGate.close` waits for the one in
progress to end, then refuses the next one (it raises :class:`StopRequested` before touching
Spark, so the query ends without committing that batch: the next run takes it in).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

# The text of a refused batch's error, as the query's failure carries it.
STOP_MARK = "spark_cdc: the stream was asked to stop"


class StopRequested(RuntimeError):
    """A micro-batch refused because the stream is stopping."""

    def __init__(self) -> None:
        super().__init__(STOP_MARK)


class BatchGate:
    """The micro-batches' turnstile (see the module)."""

    def __init__(self) -> None:
        self._running = threading.Lock()
        self._closed = threading.Event()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Run one micro-batch; refused once the gate is closed."""
        with self._running:
            if self._closed.is_set():
                raise StopRequested()
            yield

    def close(self) -> None:
        """Wait for the micro-batch in progress (if any), then refuse every later one."""
        with self._running:
            self._closed.set()

    @property
    def closed(self) -> bool:
        """Whether a stop was asked for."""
        return self._closed.is_set()


def is_requested_stop(error: BaseException | None) -> bool:
    """Whether a query's failure ``error`` is a batch refused by a closed gate."""
    return error is not None and STOP_MARK in str(error)


class _RefusedBatchFilter(logging.Filter):
    """Drops py4j's report of a refused batch (the query's end is reported instead)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, StopRequested)


logging.getLogger("py4j.clientserver").addFilter(_RefusedBatchFilter())

# The JVM logger that reports a query's failure (with the refused batch's traceback).
_QUERY_END_LOGGER = "org.apache.spark.sql.execution.streaming.runtime.MicroBatchExecution"


def quiet_query_end(spark: SparkSession) -> None:
    """Turn off the session's report of a failed query (its JVM logger) for the rest of the
    process: a stopping stream's refused batch is not an error."""
    jvm = spark.sparkContext._jvm
    level = jvm.org.apache.logging.log4j.Level.OFF
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(_QUERY_END_LOGGER, level)
