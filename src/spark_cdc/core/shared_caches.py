"""Cached frames on a shared engine (a Spark Connect server), named after the process that
cached them, so that what a killed client left can be found and released by the next one.

A Spark Connect server keeps cached data in its shared cache, not in the client's session: a
client killed before it unpersists leaves its frames cached until the server restarts. Here a
frame is cached as a global temporary view ``spark_cdc_cache_<host>_<pid>_<start>_<id>`` (the
host's and process's marks: a pid another process reuses has another start time), and
:func:`release_dead_owners` drops (and so uncaches) the views whose process on this host is gone.
Views cached from other hosts are left to their own hosts' clients.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import uuid

import psutil
from pyspark.sql import DataFrame

PREFIX = "spark_cdc_cache_"
_NAME = re.compile(rf"^{PREFIX}([0-9a-f]{{8}})_(\d+)_(\d+)_[0-9a-f]+$")


def host_mark() -> str:
    """Eight hex digits naming this host."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _start_of(pid: int) -> int | None:
    try:
        return int(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def owner_mark() -> str:
    """This process's mark: host, pid and start time (whole seconds)."""
    pid = os.getpid()
    return f"{host_mark()}_{pid}_{_start_of(pid) or 0}"


def shared_view_name(key: str | None = None) -> str:
    """A global temporary view name of this process: the same for the same ``key`` (a new one
    when None)."""
    tail = uuid.uuid4().hex if key is None else hashlib.sha256(key.encode()).hexdigest()
    return f"{PREFIX}{owner_mark()}_{tail[:12]}"


def cache_shared(frame: DataFrame, storage_level: str) -> tuple[DataFrame, str]:
    """``frame`` cached on its engine under a global temporary view of this process's name
    (lazily, at ``storage_level``, a name of Scala's StorageLevel: ``MEMORY_AND_DISK`` is
    deserialized there): the view's frame, which reads
    the cache, and the view's name."""
    session = frame.sparkSession
    name = shared_view_name()
    frame.createOrReplaceGlobalTempView(name)
    session.sql(f"cache lazy table global_temp.`{name}` options ('storageLevel' '{storage_level}')")
    return session.table(f"global_temp.`{name}`"), name


def release_shared(frame: DataFrame, name: str) -> None:
    """Drop the global temporary view ``name`` of ``frame``'s engine, and with it its cache."""
    frame.sparkSession.catalog.dropGlobalTempView(name)


def release_dead_owners(session) -> list[str]:
    """Drop the cache views of ``session``'s engine whose process on this host is gone; their
    names."""
    rows = session.sql(f"show views in global_temp like '{PREFIX}*'").collect()
    here, released = host_mark(), []
    for row in rows:
        found = _NAME.match(row.viewName)
        if not found or found.group(1) != here:
            continue
        pid, start = int(found.group(2)), int(found.group(3))
        if _start_of(pid) != start:
            session.catalog.dropGlobalTempView(row.viewName)
            released.append(row.viewName)
    return released
