"""Prometheus metrics of a schema-drift stream, for a dashboard's scraper.

The stream's listener (:class:`~spark_cdc.schema_drift.stream_monitor.ProgressRecorder`) passes
each progress report that took in rows to :meth:`StreamMetrics.observe`, the same rows it
appends to the ``_stream_progress`` table, so the endpoint and the table agree: the counters sum
what the table's rows hold, the gauges are its latest row. ``prometheus-client`` serves them over
HTTP (``/metrics``), on loopback unless told otherwise. Needs the ``metrics`` extra.
"""

from __future__ import annotations

from typing import Any

try:
    from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
except ImportError as missing:  # the metrics extra is not installed
    raise ImportError(
        "the stream's metrics endpoint needs prometheus-client: pip install 'spark-cdc[metrics]'"
    ) from missing

# ``query``: ``feed`` (the one query of a feed), ``ingest`` (bronze and the registry of a feed
# whose silver runs in event groups) or the event group's name.
LABELS = ("feed", "query")


class StreamMetrics:
    """The metrics of one query of a feed, in a registry of their own."""

    def __init__(self, feed: str, query: str = "feed") -> None:
        self.feed = feed
        self.query = query
        self.registry = CollectorRegistry()
        common = {"labelnames": LABELS, "registry": self.registry}
        self.batches = Counter(
            "spark_cdc_stream_batches", "Micro-batches that took in lines", **common
        )
        self.input_rows = Counter("spark_cdc_stream_input_rows", "Landed lines taken in", **common)
        self.last_batch = Gauge(
            "spark_cdc_stream_last_batch_id", "The latest micro-batch that took in lines", **common
        )
        self.input_rate = Gauge(
            "spark_cdc_stream_input_rows_per_second",
            "Lines landed per second, as Spark reported for the latest micro-batch",
            **common,
        )
        self.processed_rate = Gauge(
            "spark_cdc_stream_processed_rows_per_second",
            "Lines processed per second in the latest micro-batch",
            **common,
        )
        self.duration = Gauge(
            "spark_cdc_stream_batch_duration_seconds",
            "The latest micro-batch's duration (trigger to commit)",
            **common,
        )
        self._server: Any = None

    def observe(self, row: tuple) -> None:
        """Take one progress row (``stream_monitor.progress_row``) that took in lines."""
        _, _, batch_id, _, input_rows, input_rate, processed_rate, duration_ms, _ = row
        self.batches.labels(self.feed, self.query).inc()
        self.input_rows.labels(self.feed, self.query).inc(input_rows)
        self.last_batch.labels(self.feed, self.query).set(batch_id)
        self.input_rate.labels(self.feed, self.query).set(input_rate)
        self.processed_rate.labels(self.feed, self.query).set(processed_rate)
        self.duration.labels(self.feed, self.query).set((duration_ms or 0) / 1000)

    def serve(self, port: int, address: str = "127.0.0.1") -> int:
        """Serve ``/metrics`` on ``address:port`` (port 0: a free one); the port served."""
        server, _ = start_http_server(port, addr=address, registry=self.registry)
        self._server = server
        return int(server.server_port)

    def close(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
