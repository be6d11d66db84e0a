"""PySpark's own error logs turned off: an error is reported once, by whoever catches it.

PySpark logs every SQL or DataFrame error it raises that carries a query context (a missing
table, a bad column) as a JSON line on stderr, with the whole JVM stack trace, before the caller
sees the exception: a dbt command then shows each failing node's error twice, once as a wall of
JSON. The exception keeps its message and the JVM stack trace, so nothing is lost.
"""

from __future__ import annotations

QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def silence_query_context_logs() -> None:
    """Turn off PySpark's query-context error loggers in this process (idempotent)."""
    from pyspark.logger import PySparkLogger

    for name in QUERY_CONTEXT_LOGGERS:
        # Created through PySparkLogger (its callers pass structured fields a plain Logger
        # refuses), then disabled.
        PySparkLogger.getLogger(name).disabled = True
