"""Persisted DataFrames by named slot: persisting into a slot releases its previous frame.

Library functions return lazy DataFrames (a dbt Python model hands them to dbt to write), so
they cannot unpersist what they cached; a slot bounds that cache to one frame per purpose.
Slots live in a scope: the dbt adapter runs each Python model in a scope of its own (named after
the model and the run) and releases it when the node ends, so models running side by side
(``threads: 4``) never release or reuse each other's frames. Outside a scope (library calls,
benchmarks) slots are shared by the process. On a Spark Connect engine a frame is cached under
a view named after this process (:mod:`spark_cdc.core.shared_caches`), which the next client
releases if this process is killed first.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from spark_cdc.core.shared_caches import cache_shared, release_shared
from spark_cdc.core.streaming_queries import is_connect


@dataclass(frozen=True)
class _Held:
    """A cached frame and, on a Spark Connect engine, the name of the view that caches it."""

    frame: DataFrame
    view: str | None = None

    def unpersist(self) -> None:
        if self.view is None:
            self.frame.unpersist()
            return
        # A session stopped (Ctrl-C) releases nothing: a later client releases the view.
        with contextlib.suppress(Exception):
            release_shared(self.frame, self.view)


_SLOTS: dict[tuple[str, str], _Held] = {}
_LOCK = threading.Lock()
_SCOPE: ContextVar[str] = ContextVar("spark_cdc_cache_scope", default="")


def _take(key: tuple[str, str]) -> _Held | None:
    with _LOCK:
        return _SLOTS.pop(key, None)


def keep(frame: DataFrame, slot: str) -> DataFrame:
    """``frame`` persisted in ``slot`` of the current scope: in memory as column batches, not
    serialized (memory is what a small machine has; serializing every batch cost a third of the
    time), spilling to disk."""
    key = (_SCOPE.get(), slot)
    previous = _take(key)
    if previous is not None:
        previous.unpersist()
    if is_connect(frame.sparkSession):
        frame, view = cache_shared(frame, "MEMORY_AND_DISK")  # deserialized, in Scala
        held = _Held(frame, view)
    else:
        held = _Held(frame.persist(StorageLevel.MEMORY_AND_DISK_DESER))
    with _LOCK:
        _SLOTS[key] = held
    return frame


def release(slot: str) -> None:
    """Unpersist the frame held in ``slot`` of the current scope, if any."""
    previous = _take((_SCOPE.get(), slot))
    if previous is not None:
        previous.unpersist()


def held_slots() -> list[tuple[str, str]]:
    """(scope, slot) of every frame held now."""
    with _LOCK:
        return sorted(_SLOTS)


@contextmanager
def enter_scope(name: str) -> Iterator[None]:
    """Slots used in the block are those of ``name`` (kept after it: see release_scope)."""
    token = _SCOPE.set(name)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def release_scope(name: str) -> None:
    """Unpersist every frame held in the slots of ``name``."""
    with _LOCK:
        mine = [key for key in _SLOTS if key[0] == name]
        frames = [_SLOTS.pop(key) for key in mine]
    for frame in frames:
        frame.unpersist()


@contextmanager
def scope(name: str) -> Iterator[None]:
    """Slots of ``name``, released when the block ends."""
    try:
        with enter_scope(name):
            yield
    finally:
        release_scope(name)
