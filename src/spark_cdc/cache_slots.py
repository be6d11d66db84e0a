"""Persisted DataFrames by named slot: persisting into a slot releases its previous frame.

Library functions return lazy DataFrames (a dbt Python model hands them to dbt to write), so
they cannot unpersist what they cached; a slot bounds that cache to one frame per purpose."""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame

_SLOTS: dict[str, DataFrame] = {}


def keep(frame: DataFrame, slot: str) -> DataFrame:
    """``frame`` persisted in ``slot``: in memory as column batches, not serialized (memory is
    what a small machine has; serializing every batch cost a third of the time), spilling to
    disk."""
    previous = _SLOTS.pop(slot, None)
    if previous is not None:
        previous.unpersist()
    _SLOTS[slot] = frame.persist(StorageLevel.MEMORY_AND_DISK_DESER)
    return frame


def release(slot: str) -> None:
    """Unpersist the frame held in ``slot``, if any."""
    previous = _SLOTS.pop(slot, None)
    if previous is not None:
        previous.unpersist()
