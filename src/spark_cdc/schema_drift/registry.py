"""The schema registry: one row per (event type, variation hash), versioned per event type.

A run of the registry takes the bronze loads it has not seen yet (``load_seq`` above the highest
``last_load_seq`` it holds), in load order:

- a variation already registered gets its ``last_seen_at``, ``events_seen`` and
  ``last_load_seq`` updated;
- the new variations of one load are added to their event type's superset (the superset of the
  latest version) in the order (source file of their prototype, hash) by the widening rules of
  :mod:`spark_cdc.schema_drift.inference`; when at least one of them is accepted the event type
  gets one new ``schema_version`` whose superset holds all of them; a variation that conflicts
  is registered with status ``conflict`` and its reason, and its events are quarantined.

The prototype of a variation is the first payload seen with it: the smallest (load_seq, source
file, payload). Versions depend only on the bronze loads, so a full rebuild gives the same
registry as the runs that built it incrementally (but for ``registered_at`` and ``process_id``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from spark_cdc.schema_drift.inference import evolve, schema_from_json
from spark_cdc.schema_drift.variation import parsed_payload, variation_signature

ACCEPTED = "accepted"
CONFLICT = "conflict"
KEY = ["event_type", "variation_hash"]

REGISTRY_SCHEMA = StructType(
    [
        StructField("event_type", StringType(), False),
        StructField("variation_hash", StringType(), False),
        StructField("status", StringType(), False),
        StructField("conflict_reason", StringType(), True),
        StructField("schema_version", IntegerType(), False),
        StructField("prototype", StringType(), False),
        StructField("prototype_source_file", StringType(), True),
        StructField("superset_schema", StringType(), True),
        StructField("first_seen_at", TimestampNTZType(), False),
        StructField("last_seen_at", TimestampNTZType(), False),
        StructField("first_load_seq", LongType(), False),
        StructField("last_load_seq", LongType(), False),
        StructField("events_seen", LongType(), False),
        StructField("registered_at", TimestampNTZType(), False),
        StructField("process_id", StringType(), True),
    ]
)


@dataclass(frozen=True)
class SeenVariation:
    """What a run's new loads hold of one variation."""

    event_type: str
    variation_hash: str
    first_load_seq: int
    prototype_source_file: str
    prototype: str
    first_seen_at: datetime
    last_seen_at: datetime
    last_load_seq: int
    events: int


def seen_variations(valid_events: DataFrame) -> list[SeenVariation]:
    """Aggregate parseable bronze events per variation (one small row each, to the driver)."""
    first = F.min(F.struct("load_seq", "source_file", "payload"))
    rows = (
        valid_events.groupBy(*KEY)
        .agg(
            first.alias("first"),
            F.min("ingested_at").alias("first_seen_at"),
            F.max("ingested_at").alias("last_seen_at"),
            F.max("load_seq").alias("last_load_seq"),
            F.count(F.lit(1)).alias("events"),
        )
        .collect()
    )
    return [
        SeenVariation(
            row.event_type,
            row.variation_hash,
            row.first.load_seq,
            row.first.source_file,
            row.first.payload,
            row.first_seen_at,
            row.last_seen_at,
            row.last_load_seq,
            row.events,
        )
        for row in rows
    ]


def _latest_accepted(existing: Sequence[dict[str, Any]]) -> dict[str, tuple[int, str]]:
    """Per event type: (latest schema version, its superset JSON) among accepted variations."""
    latest: dict[str, tuple[int, str]] = {}
    for row in existing:
        if row["status"] != ACCEPTED:
            continue
        current = latest.get(row["event_type"])
        if current is None or row["schema_version"] > current[0]:
            latest[row["event_type"]] = (row["schema_version"], row["superset_schema"])
    return latest


def _versions(existing: Sequence[dict[str, Any]]) -> dict[str, int]:
    versions: dict[str, int] = {}
    for row in existing:
        versions[row["event_type"]] = max(versions.get(row["event_type"], 0), row["schema_version"])
    return versions


def registry_rows(
    existing: Sequence[dict[str, Any]],
    seen: Sequence[SeenVariation],
    registered_at: datetime,
    process_id: str | None,
    reserved_columns: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The registry rows a run inserts or updates (plain Python: the rules of the module)."""
    by_key = {(row["event_type"], row["variation_hash"]): row for row in existing}
    out: list[dict[str, Any]] = []
    new: dict[str, list[SeenVariation]] = defaultdict(list)
    for item in seen:
        old = by_key.get((item.event_type, item.variation_hash))
        if old is None:
            new[item.event_type].append(item)
            continue
        out.append(
            {
                **old,
                "last_seen_at": max(old["last_seen_at"], item.last_seen_at),
                "last_load_seq": max(old["last_load_seq"], item.last_load_seq),
                "events_seen": old["events_seen"] + item.events,
                "registered_at": registered_at,
                "process_id": process_id,
            }
        )
    latest = _latest_accepted(existing)
    versions = _versions(existing)
    for event_type, items in sorted(new.items()):
        superset = schema_from_json(latest.get(event_type, (0, None))[1])
        version = versions.get(event_type, 0)
        loads: dict[int, list[SeenVariation]] = defaultdict(list)
        for item in items:
            loads[item.first_load_seq].append(item)
        for load_seq in sorted(loads):
            batch = sorted(
                loads[load_seq], key=lambda v: (v.prototype_source_file, v.variation_hash)
            )
            outcome = evolve(
                superset, [(v.variation_hash, v.prototype) for v in batch], reserved_columns
            )
            if outcome.accepted:
                version += 1
                superset = outcome.superset
            for item in batch:
                conflict = outcome.conflicts.get(item.variation_hash)
                out.append(
                    {
                        "event_type": item.event_type,
                        "variation_hash": item.variation_hash,
                        "status": CONFLICT if conflict else ACCEPTED,
                        "conflict_reason": conflict,
                        "schema_version": version,
                        "prototype": item.prototype,
                        "prototype_source_file": item.prototype_source_file,
                        "superset_schema": None if conflict else superset.json(),
                        "first_seen_at": item.first_seen_at,
                        "last_seen_at": item.last_seen_at,
                        "first_load_seq": item.first_load_seq,
                        "last_load_seq": item.last_load_seq,
                        "events_seen": item.events,
                        "registered_at": registered_at,
                        "process_id": process_id,
                    }
                )
    return out


def registry_increment(
    spark: SparkSession,
    bronze: DataFrame,
    existing: DataFrame | None,
    process_id: str | None,
    reserved_columns: Sequence[str] = (),
) -> DataFrame:
    """Registry rows to merge on (event_type, variation_hash) for the loads not yet registered."""
    existing_rows = [] if existing is None else [row.asDict() for row in existing.collect()]
    registered = max((row["last_load_seq"] for row in existing_rows), default=0)
    valid = bronze.where(F.col("parse_error").isNull() & (F.col("load_seq") > registered))
    now = spark.sql("select localtimestamp() as now").first().now
    rows = registry_rows(existing_rows, seen_variations(valid), now, process_id, reserved_columns)
    frame = spark.createDataFrame(
        [tuple(row[name] for name in REGISTRY_SCHEMA.names) for row in rows], REGISTRY_SCHEMA
    )
    signature = variation_signature(parsed_payload(F.col("prototype")))
    return frame.withColumn("variation_signature", signature)


def registered_through(registry: DataFrame) -> int:
    """The highest bronze load the registry has taken in (0 when empty)."""
    return registry.agg(F.max("last_load_seq")).first()[0] or 0
