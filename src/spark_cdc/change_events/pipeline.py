"""Incremental change-event resolution: a ledger of every input event, and history versions.

State and its bounds
--------------------
- The **ledger** keeps every input event once, with its status: ``applied``, ``duplicate`` or
  ``quarantined`` (and the reason). Events in = applied + duplicates + quarantined, per batch and
  per run. It is the audit trail, and the source of truth for replays.
- The **history** (SCD2 versions, resolve.resolve_versions) is the resolver's state: the versions
  live at any instant H are the state at H (tombstones included, as deleted versions).
- ``allowed_lateness`` bounds the work of a run. A batch's *watermark* is the latest event_ts of
  the valid events of all earlier batches (ingestion order, ``_batch_id``) minus the allowed
  lateness; an event older than its batch's watermark is quarantined as ``too_late`` (kept, never
  applied). A run then only re-resolves the applied events at or after its horizon H (the
  lowest watermark of its new batches), starting from the history versions live at H for the
  keys those events touch; versions before H are final. Without ``allowed_lateness`` no event is
  ever too late and every run re-resolves all events (exact for any lateness, cost grows with
  the feed).

Because watermarks depend only on the batches' ingestion order, a full rebuild from all batches
quarantines the same events and yields the same versions as any sequence of incremental runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_cdc.cache_slots import keep
from spark_cdc.change_events.evolution import (
    Discovery,
    column_sets,
    columns_in,
    conflict_reason,
    discover,
    evolved_schema,
    with_discovered_images,
)
from spark_cdc.change_events.model import ChangeEventConfigError, TargetSchema
from spark_cdc.change_events.normalize import REASON, normalize_events
from spark_cdc.change_events.resolve import VERSION_COLUMNS, resolve_versions
from spark_cdc.hash_cdc.hashing import column

BATCH = "_batch_id"
STATUSES = ("applied", "duplicate", "quarantined")
INITIAL_VERSION = "initial"
# Delta keeps file statistics only on the columns that runs filter on: the ledger's batch, time,
# status and run; the history's validity and run (Delta keeps none on booleans). Fingerprints,
# version ids, row hashes, images and payload values are spread over every file (no statistic
# on them would skip one), and collecting them cost about a fifth of each table's write (1M
# events, measured).
LEDGER_TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": f"{BATCH},event_ts,status,process_id"}
HISTORY_TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": "valid_from,valid_to,process_id"}
_DURATION = re.compile(r"^\s*(\d+)\s*(second|minute|hour|day)s?\s*$")


def parse_lateness(text: str | None) -> timedelta | None:
    """'90 minutes', '7 days' ... -> timedelta; None, '' or 'none' -> None (unbounded)."""
    if text is None or str(text).strip().lower() in ("", "none", "null"):
        return None
    match = _DURATION.match(str(text).lower())
    if not match:
        raise ChangeEventConfigError(
            f"allowed_lateness must read like '30 minutes' or '7 days', not {text!r}"
        )
    return timedelta(**{f"{match.group(2)}s": int(match.group(1))})


@dataclass(frozen=True)
class SourceConfig:
    """A change-event source: its typed target schema and the allowed lateness of its events."""

    name: str
    schema: TargetSchema
    allowed_lateness: timedelta | None = None
    evolve_columns: bool = False

    @classmethod
    def from_mapping(cls, name: str, raw: Mapping[str, Any]) -> SourceConfig:
        """From YAML: columns, key_columns, allowed_lateness and evolve_columns (optional)."""
        evolve = str(raw.get("evolve_columns", False)).strip().lower() in {"true", "1", "yes"}
        return cls(
            name,
            TargetSchema.from_mapping(raw),
            parse_lateness(raw.get("allowed_lateness")),
            evolve,
        )


def discovery_of(events: DataFrame, config: SourceConfig) -> Discovery:
    """The source's discovered columns and conflicting column sets (none unless evolving)."""
    if not config.evolve_columns:
        return Discovery((), {})
    return discover(config.schema, column_sets(events))


def evolved_config(config: SourceConfig, ledger: DataFrame) -> SourceConfig:
    """The source with its target schema grown by the columns its ledger's events brought."""
    discovery = discovery_of(ledger, config)
    return replace(config, schema=evolved_schema(config.schema, discovery))


def evolved_since(config: SourceConfig, history: StructType, new_rows: DataFrame) -> SourceConfig:
    """evolved_config of a ledger whose earlier batches a history table (its schema ``history``)
    reflects, from that table's columns and the column sets of ``new_rows`` (the later batches).

    The same schema as evolved_config over the whole ledger: the history holds the columns
    discovered from the earlier batches, in their order; a later batch's column set comes
    after every earlier one; and the ledger quarantined every column set that conflicts, so
    the valid later ones only add columns."""
    if not config.evolve_columns:
        return config
    known = columns_in(config.schema, history)
    return replace(config, schema=evolved_schema(known, discover(known, column_sets(new_rows))))


def _declared_names_only(events: DataFrame, schema: TargetSchema) -> bool:
    """Whether every image column set of the valid ``events`` names declared columns only (and
    the declared columns pass the registry's rules: otherwise every set conflicts)."""
    if discover(schema, [(0, tuple(schema.columns))]).conflicts:
        return False
    names = {name for _, names in column_sets(events) for name in names}
    return names <= set(schema.columns)


def _watermarks(batches: DataFrame, lateness: timedelta) -> DataFrame:
    """Per batch: the latest valid event_ts of all earlier batches minus the lateness."""
    earlier = Window.orderBy(BATCH).rowsBetween(Window.unboundedPreceding, -1)
    latest = F.max("batch_max_ts").over(earlier)
    watermark = latest - F.make_dt_interval(secs=F.lit(lateness.total_seconds()))
    return batches.select(BATCH, watermark.alias("watermark"))


def _with_watermarks(
    events: DataFrame, feed: DataFrame, prior: DataFrame | None, lateness: timedelta
) -> DataFrame:
    """``events`` with the watermark of their batch (the ledger so far counts as earlier)."""
    # Events quarantined for their column set (a name collision, an invalid name) still tell how
    # far the source's time has got.
    valid_ts = (
        F.col(REASON).isNull()
        | (F.col(REASON) == "too_late")
        | F.col(REASON).startswith("name_collision:")
        | F.col(REASON).startswith("invalid_name:")
    )
    per_batch = events.where(valid_ts).groupBy(BATCH).agg(F.max("event_ts").alias("batch_max_ts"))
    if prior is not None:
        earlier = prior.where(valid_ts).groupBy(BATCH).agg(F.max("event_ts").alias("batch_max_ts"))
        per_batch = earlier.unionByName(per_batch)
    all_batches = feed.select(BATCH).distinct().join(per_batch, BATCH, "full")
    marks = _watermarks(all_batches, lateness)
    return events.join(F.broadcast(marks), BATCH, "left")


def ledger_increment(
    feed: DataFrame, prior: DataFrame | None, config: SourceConfig, process_id: str
) -> DataFrame:
    """Ledger rows for the feed's batches that ``prior`` (the ledger so far) does not hold."""
    if prior is not None:
        feed = feed.join(F.broadcast(prior.select(BATCH).distinct()), BATCH, "left_anti")
    # Kept: read by the ledger rows, the column sets and (with a lateness) the per-batch
    # watermarks, and filtered on its reason (which the optimizer would otherwise inline into
    # every filter).
    events = keep(normalize_events(feed, config.schema), "change_events.ledger_events")
    if config.allowed_lateness is None:
        # No event is ever too late: every batch's watermark is null, without a pass over the
        # batches (or over the prior ledger's).
        events = events.withColumn("watermark", F.lit(None).cast("timestamp"))
    else:
        events = _with_watermarks(events, feed, prior, config.allowed_lateness)
        late = F.col(REASON).isNull() & (F.col("event_ts") < F.col("watermark"))
        events = events.withColumn(REASON, F.when(late, F.lit("too_late")).otherwise(F.col(REASON)))
    if config.evolve_columns:
        columns = [BATCH, "change_kind", "column_names", REASON]
        known: DataFrame | None = events.select(*columns)
        if prior is not None:
            # A column set of declared names only cannot conflict: the ledger so far (for the
            # columns discovered before) is read only when the increment brings another name.
            if _declared_names_only(known, config.schema):
                known = None
            else:
                known = prior.select(*columns).unionByName(known)
        if known is not None:
            conflict = conflict_reason(discovery_of(known, config))
            events = events.withColumn(REASON, F.coalesce(F.col(REASON), conflict))
    first = Window.partitionBy("event_fingerprint", F.col(REASON).isNull()).orderBy(BATCH)
    repeated = F.col(REASON).isNull() & (F.row_number().over(first) > 1)
    events = events.withColumn("_repeated", repeated)
    if prior is not None:
        seen = prior.where(F.col("status") == "applied")
        horizon = None
        if config.allowed_lateness is not None:
            horizon = events.agg(F.min("watermark")).first()[0]
        if horizon is not None:
            seen = seen.where(F.col("event_ts") >= F.lit(horizon))
        # Only this increment's own fingerprints are looked up in the ledger so far (a small
        # increment is broadcast): the earlier events are read, not shuffled.
        fresh = events.where(F.col(REASON).isNull()).select("event_fingerprint")
        seen = (
            seen.select("event_fingerprint")
            .join(fresh, "event_fingerprint", "left_semi")
            .distinct()
            .select("event_fingerprint", F.lit(True).alias("_seen"))
        )
        events = events.join(seen, "event_fingerprint", "left").withColumn(
            "_repeated", F.col("_repeated") | (F.col(REASON).isNull() & F.col("_seen").isNotNull())
        )
    status = (
        F.when(F.col(REASON).isNotNull(), F.lit("quarantined"))
        .when(F.col("_repeated"), F.lit("duplicate"))
        .otherwise(F.lit("applied"))
    )
    return events.select(
        *feed.columns,
        "change_kind",
        "event_fingerprint",
        "image",
        "old_key",
        REASON,
        status.alias("status"),
        "watermark",
        F.lit(process_id).alias("process_id"),
    )


def initial_versions(initial: DataFrame, schema: TargetSchema, process_id: str) -> DataFrame:
    """Existing rows (target columns, created_at, updated_at[, last_change_type]) as versions."""
    change_type = (
        F.col("last_change_type") if "last_change_type" in initial.columns else F.lit("insert")
    )
    return initial.select(
        *_columns(initial, schema),
        F.col("created_at").cast("timestamp"),
        F.col("updated_at").cast("timestamp").alias("valid_from"),
        F.lit(None).cast("timestamp").alias("valid_to"),
        change_type.alias("change_type"),
        F.lit(False).alias("is_deleted"),
        F.lit(True).alias("is_current"),
        F.lit(None).cast("long").alias("event_seq"),
        F.lit(None).cast("string").alias("event_fingerprint"),
        F.lit(INITIAL_VERSION).alias("version_id"),
        F.lit(False).alias("is_ambiguous"),
        F.lit(process_id).alias("process_id"),
    )


def _columns(frame: DataFrame, schema: TargetSchema) -> list:
    """The target columns of ``frame``, cast; null for columns it does not have (yet)."""
    return [
        (column(c) if c in frame.columns else F.lit(None)).cast(t).alias(c)
        for c, t in schema.columns.items()
    ]


def _touched_keys(events: DataFrame, schema: TargetSchema) -> DataFrame:
    image_keys = events.where(F.col("image").isNotNull()).select(
        *(F.col("image")[k].alias(k) for k in schema.keys)
    )
    old_keys = events.where(F.col("old_key").isNotNull()).select(
        *(F.col("old_key")[k].alias(k) for k in schema.keys)
    )
    return image_keys.unionByName(old_keys).distinct()


def history_increment(
    ledger: DataFrame,
    prior: DataFrame | None,
    initial: DataFrame | None,
    config: SourceConfig,
    high_dttm: str,
    process_id: str,
    resolved_through: int | None = None,
) -> DataFrame:
    """History versions to merge (on the key columns and version_id) for the ledger batches above
    ``resolved_through`` (the history's mark, see progress; without one, the batches this run
    ``process_id`` ledgered); all versions when ``prior`` is None (a full build)."""
    declared = config.schema
    if resolved_through is None:
        new_rows = ledger.where(F.col("process_id") == process_id)
    else:
        new_rows = ledger.where(F.col(BATCH) > F.lit(resolved_through))
    horizon = None
    if prior is not None:
        # One job tells both whether there is anything new and how far back it reaches. A new
        # batch without a watermark (no valid event before it, or no lateness) bounds nothing:
        # every event is resolved again.
        found = new_rows.agg(
            F.count(F.lit(1)).alias("rows"),
            F.min("watermark"),
            F.count_if(F.col("watermark").isNull()),
        ).first()
        if found[0] == 0:
            return prior.limit(0)
        horizon = found[1] if found[2] == 0 else None
    if prior is not None and resolved_through is not None:
        # The history reflects the batches up to its mark: only the later ones are read for
        # new columns (not the whole ledger).
        config = evolved_since(config, prior.schema, new_rows)
    else:
        config = evolved_config(config, ledger)
    schema = config.schema
    discovered = [c for c in schema.columns if c not in declared.columns]
    applied = with_discovered_images(
        ledger.where(F.col("status") == "applied"), declared, discovered
    )
    if prior is None or horizon is None:
        base = None if initial is None else initial_versions(initial, schema, process_id)
        return _resolved(applied, base, config, high_dttm, process_id)
    events = applied.where(F.col("event_ts") >= F.lit(horizon))
    at_horizon = (
        (F.col("valid_from") < F.lit(horizon)) & (F.col("valid_to") >= F.lit(horizon))
    ) | ((F.col("version_id") == INITIAL_VERSION) & (F.col("valid_from") >= F.lit(horizon)))
    base = prior.where(at_horizon).join(
        _touched_keys(events, schema), list(schema.keys), "left_semi"
    )
    return _resolved(
        events,
        base.select(*_columns(base, schema), *VERSION_COLUMNS),
        config,
        high_dttm,
        process_id,
    )


def _resolved(
    events: DataFrame, base: DataFrame | None, config: SourceConfig, high_dttm: str, process_id: str
) -> DataFrame:
    versions = resolve_versions(events, config.schema, high_dttm, base, process_id)
    # Quoted: a discovered column's name may hold a dot (``a.b``), which F.col would split.
    content = [column(c) for c in versions.columns if c != "process_id"]
    return versions.withColumn("row_hash", F.md5(F.to_json(F.struct(*content))))


def merge_versions(prior: DataFrame, changes: DataFrame, schema: TargetSchema) -> DataFrame:
    """What MERGE on (keys, version_id) leaves: ``changes`` replace or add rows of ``prior``."""
    on = [*schema.keys, "version_id"]
    kept = prior.join(changes.select(*on), on, "left_anti")
    return kept.unionByName(changes, allowMissingColumns=True)
