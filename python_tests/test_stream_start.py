"""Starting a stream's query on Spark Connect: a Python worker that did not connect back in
Spark's fixed 10 s (the text a Connect server sends, seen on a loaded machine) starts the query
again, at most three times in all, saying so in one line each time; other errors pass through."""

from __future__ import annotations

import re
import socket
import threading

import pytest

from spark_cdc.core.streaming_queries import WORKER_TIMEOUT, StreamStartError, start_query

# The first line of what a loaded Spark Connect 4.2 server returned (engine suite, 2026-12-02).
SERVER_ERROR = (
    "Python worker failed to connect back.\n\nJVM stacktrace:\n"
    "org.apache.spark.SparkException\n\tat org.apache.spark.api.python.PythonWorkerFactory"
    ".createSimpleWorker(PythonWorkerFactory.scala:303)"
)


class Writer:
    """A stream writer whose start fails ``failures`` times with ``error`` first."""

    def __init__(self, failures: int, error: str = SERVER_ERROR) -> None:
        self.failures, self.error, self.starts = failures, error, 0

    def start(self) -> str:
        self.starts += 1
        if self.starts <= self.failures:
            raise RuntimeError(self.error)
        return "query"


def test_the_text_matched_is_the_servers():
    assert WORKER_TIMEOUT in SERVER_ERROR


@pytest.mark.parametrize("failures", [0, 1, 2])
def test_a_worker_that_did_not_connect_back_starts_the_query_again(failures, capsys):
    writer = Writer(failures)
    assert start_query(writer, remote=True) == "query"
    assert writer.starts == failures + 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == failures
    assert all("did not connect back within Spark's 10 s" in line for line in lines)


def test_three_failed_starts_give_one_clear_error(capsys):
    writer = Writer(3)
    with pytest.raises(StreamStartError, match="3 times: the engine's machine is too loaded"):
        start_query(writer, remote=True)
    assert writer.starts == 3


@pytest.mark.parametrize(("remote", "text"), [(False, SERVER_ERROR), (True, "another failure")])
def test_other_errors_and_the_embedded_session_are_not_retried(remote, text):
    writer = Writer(1, text)
    with pytest.raises(RuntimeError, match=re.escape(text.splitlines()[0])):
        start_query(writer, remote=remote)
    assert writer.starts == 1


def test_a_start_refused_by_the_servers_python_check_leaves_no_metrics_endpoint(
    monkeypatch, tmp_path
):
    """The check runs before the endpoint starts: a refused start keeps no port or thread."""
    import spark_cdc.schema_drift.stream as stream

    def refuse(_spark) -> str:
        raise stream.ServerPythonError("the server's Python workers run Python 3.10")

    monkeypatch.setattr(stream, "is_connect", lambda _spark: True)
    monkeypatch.setattr(stream, "check_server_python", refuse)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    threads = threading.active_count()
    with pytest.raises(stream.ServerPythonError):
        stream._start(
            None,
            None,
            print,
            print,
            "refused",
            stream.FeedTables("s", "events", "silver__"),
            tmp_path / "checkpoint",
            "p",
            available_now=True,
            trigger_interval="30 seconds",
            after_batch=None,
            metrics_port=port,
            metrics_address="127.0.0.1",
            query="feed",
        )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # free: nothing serves on it
    assert threading.active_count() == threads
