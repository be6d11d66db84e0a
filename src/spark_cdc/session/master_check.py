"""Fail fast on a Spark master that cannot run anything.

Spark itself keeps retrying an unreachable standalone master for minutes, and a reachable one
without workers leaves every job waiting for resources forever. Before the session starts, each
``spark://host:port`` of the master URL is probed over TCP; after it starts, the session waits a
bounded time (``SPARK_CDC_EXECUTOR_TIMEOUT`` seconds, default 90) for a first executor.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

STANDALONE_PREFIX = "spark://"
DEFAULT_PORT = 7077


class MasterUnavailableError(RuntimeError):
    """The configured master cannot be reached, or gives no executor."""


def standalone_addresses(master: str) -> list[tuple[str, int]]:
    """(host, port) of each master of a ``spark://h1:p1[,h2:p2]`` URL; [] for other masters."""
    if not master.startswith(STANDALONE_PREFIX):
        return []
    addresses = []
    for part in master[len(STANDALONE_PREFIX) :].split(","):
        host, _, port = part.strip().rpartition(":")
        if not host:
            host, port = port, str(DEFAULT_PORT)
        try:
            addresses.append((host.strip("[]"), int(port)))
        except ValueError:
            raise MasterUnavailableError(
                f"Spark master URL {master!r}: '{part}' is not HOST:PORT"
            ) from None
    return addresses


def check_reachable(master: str, timeout: float = 5.0) -> None:
    """Raise :class:`MasterUnavailableError` unless some master of a standalone URL accepts a
    TCP connection within ``timeout`` seconds (other masters are not probed)."""
    failures = []
    addresses = standalone_addresses(master)
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as error:
            failures.append(f"{host}:{port}: {error.strerror or error}")
    if addresses:
        raise MasterUnavailableError(
            f"Spark master {master} is not reachable ({'; '.join(failures)}). Check the URL "
            f"(spark://HOST:PORT, port {DEFAULT_PORT} by default) and that the master runs."
        )


def executor_timeout() -> float:
    """Seconds to wait for a first executor: ``$SPARK_CDC_EXECUTOR_TIMEOUT`` or 90."""
    return float(os.environ.get("SPARK_CDC_EXECUTOR_TIMEOUT", "90"))


def wait_for_executors(session: Any, master: str, timeout: float | None = None) -> None:
    """Wait until a classic session on a standalone master has an executor, else raise."""
    if not master.startswith(STANDALONE_PREFIX):
        return
    timeout = executor_timeout() if timeout is None else timeout
    tracker = session.sparkContext._jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # The driver is listed too: an executor makes it two.
        if len(tracker.getExecutorInfos()) > 1:
            return
        time.sleep(0.5)
    memory = session.conf.get("spark.executor.memory", "1g")
    cores = session.conf.get("spark.executor.cores", "all free")
    raise MasterUnavailableError(
        f"Spark master {master} accepted the application but no executor started within "
        f"{timeout:.0f} s: check that workers are registered with enough free cores and memory "
        f"(spark.executor.memory={memory}, spark.executor.cores={cores}) and that they can "
        "connect back to this driver (spark.driver.host). SPARK_CDC_EXECUTOR_TIMEOUT sets the wait."
    )
