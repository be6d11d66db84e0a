"""Incremental change-event resolution: a ledger of every input event, and history versions.

State and its bounds
--------------------
- The **ledger** keeps every input event once, with its status: ``applied``, ``duplicate``,
  ``quarantined`` (and the reason) or ``skipped`` (a tombstone: no change). Events in =
  applied + duplicates + quarantined + skipped, per batch and per run. It is the audit trail,
  and the source of truth for replays.
- The **history** (SCD2 versions, resolve.resolve_versions) is the resolver's state: the versions
  live at any instant H are the state at H (tombstones included, as deleted versions).
- ``allowed_lateness`` bounds what is applied: a batch's *watermark* is the latest event_ts of
  the valid events of all earlier batches (ingestion order, ``_batch_id``) minus the allowed
  lateness; an event older than its batch's watermark is quarantined as ``too_late`` (kept, never
  applied). Without ``allowed_lateness`` no event is ever too late.
- A run re-resolves only what its new applied events can change (history_increment): the keys
  they act on (and the keys moves link to them), from their versions live at the earliest new
  event_ts. An in-order run reads its own events and the history's open versions; a late event
  makes it read the applied events since that event's time, and resolve its keys only.

Because watermarks depend only on the batches' ingestion order, a full rebuild from all batches
quarantines the same events and yields the same versions as any sequence of incremental runs.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.evolution import (
    Discovery,
    column_sets,
    column_types,
    columns_in,
    conflict_reason,
    discover,
    evolved_schema,
    with_discovered_images,
)
from spark_cdc.change_events.key_changes import pair_key_changes
from spark_cdc.change_events.linked_keys import action_keys, key_columns_of, linked_keys, on_keys
from spark_cdc.change_events.model import (
    TOMBSTONE,
    TargetSchema,
)
from spark_cdc.change_events.normalize import (
    COLUMN_TYPES,
    POSITION,
    REASON,
    UNCHANGED_COLUMNS,
    normalize_events,
)
from spark_cdc.change_events.progress import latest_batch
from spark_cdc.change_events.resolve import (
    TRUNCATE,
    VERSION_COLUMNS,
    KeyMoves,
    resolve_versions,
)
from spark_cdc.change_events.sequence import with_sequence
from spark_cdc.change_events.tracked import (
    CHANGED_AT,
    DELETE_FLAG,
    lowered_horizon,
    with_tombstones,
)
from spark_cdc.core.cache_slots import keep
from spark_cdc.hash_cdc.hashing import column

BATCH = "_batch_id"
STATUSES = ("applied", "duplicate", "quarantined", "skipped")
INITIAL_VERSION = "initial"
# Delta keeps file statistics only on the columns that runs filter on: the ledger's batch, time,
# status and run; the history's validity and run (Delta keeps none on booleans). Fingerprints,
# version ids, row hashes, images and payload values are spread over every file (no statistic
# on them would skip one), and collecting them cost about a fifth of each table's write (1M
# events, measured).
LEDGER_TABLE_PROPERTIES = {"delta.dataSkippingStatsColumns": f"{BATCH},event_ts,status,process_id"}
HISTORY_TABLE_PROPERTIES = {
    "delta.dataSkippingStatsColumns": "valid_from,valid_to,process_id",
    "delta.enableChangeDataFeed": "true",  # what each run wrote (history_feed)
}


def with_null_updates_kept(events: DataFrame, schema: TargetSchema) -> DataFrame:
    """``events`` whose updates also list their NULL non-key columns as unchanged (the resolver
    then keeps each one's previous value, as for an unchanged TOASTed value)."""
    if not schema.nonkeys:
        return events
    nulls = F.filter(
        F.array(*(F.when(F.col("image")[c].isNull(), F.lit(c)) for c in schema.nonkeys)),
        lambda c: c.isNotNull(),
    )
    listed = (
        F.col(UNCHANGED_COLUMNS)
        if UNCHANGED_COLUMNS in events.columns
        else F.lit(None).cast("array<string>")
    )
    kept = F.array_distinct(F.concat(F.coalesce(listed, F.array().cast("array<string>")), nulls))
    update = (F.col("change_kind") == "update") & (F.size(kept) > 0)
    return events.withColumn(UNCHANGED_COLUMNS, F.when(update, kept).otherwise(listed))


def discovery_of(events: DataFrame, config: SourceConfig) -> Discovery:
    """The source's discovered columns and conflicting column sets (none unless evolving)."""
    if not config.evolve_columns:
        return Discovery((), {})
    excluded = config.except_columns
    sets, types = column_sets(events, excluded), column_types(events, excluded)
    return discover(config.schema, sets, types, excluded)


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
    excluded = config.except_columns
    sets, types = column_sets(new_rows, excluded), column_types(new_rows, excluded)
    discovery = discover(known, sets, types, excluded)
    return replace(config, schema=evolved_schema(known, discovery))


def _declared_names_only(events: DataFrame, config: SourceConfig) -> bool:
    """Whether every image column set of the valid ``events`` names declared (or excluded)
    columns only (and the declared columns pass the registry's rules: otherwise every set
    conflicts)."""
    schema = config.schema
    if discover(schema, [(0, tuple(schema.columns))]).conflicts:
        return False
    names = {name for _, names in column_sets(events, config.except_columns) for name in names}
    return names <= set(schema.columns)


def _watermarks(batches: DataFrame, lateness: timedelta) -> DataFrame:
    """Per batch: the latest valid event_ts of all earlier batches minus the lateness."""
    earlier = Window.orderBy(BATCH).rowsBetween(Window.unboundedPreceding, -1)
    latest = F.max("batch_max_ts").over(earlier)
    watermark = latest - F.make_dt_interval(secs=F.lit(lateness.total_seconds()))
    return batches.select(BATCH, watermark.alias("watermark"))


def _with_watermarks(
    events: DataFrame,
    feed: DataFrame,
    prior: DataFrame | None,
    lateness: timedelta,
    highest: int | None,
) -> DataFrame:
    """``events`` with the watermark of their batch (the ledger so far, whose highest batch is
    ``highest``, counts as earlier)."""
    # Events quarantined for their column set (a name collision, an invalid name) still tell how
    # far the source's time has got.
    valid_ts = (
        F.col(REASON).isNull()
        | (F.col(REASON) == "too_late")
        | F.col(REASON).startswith("name_collision:")
        | F.col(REASON).startswith("invalid_name:")
    )
    per_batch = events.where(valid_ts).groupBy(BATCH).agg(F.max("event_ts").alias("batch_max_ts"))
    if prior is not None and highest is not None:
        # The latest valid event_ts of all earlier batches, from the ledger's last batch alone:
        # its own latest, or its watermark plus the lateness (the latest of the batches before
        # it), whichever is later (Delta reads that batch's files only).
        carried = F.max("watermark") + F.make_dt_interval(secs=F.lit(lateness.total_seconds()))
        own = F.max(F.when(valid_ts, F.col("event_ts")))
        earlier = (
            prior.where(F.col(BATCH) == F.lit(highest))
            .agg(F.greatest(own, carried).alias("batch_max_ts"))
            .select(F.lit(highest).cast(prior.schema[BATCH].dataType).alias(BATCH), "batch_max_ts")
        )
        per_batch = earlier.unionByName(per_batch)
    all_batches = feed.select(BATCH).distinct().join(per_batch, BATCH, "full")
    marks = _watermarks(all_batches, lateness)
    return events.join(F.broadcast(marks), BATCH, "left")


def new_batches(feed: DataFrame, highest: int | None) -> DataFrame:
    """The feed's batches above ``highest``, the highest batch of the ledger so far (the landing
    numbers batches upward and a ledger run takes every batch it finds, so no batch below it is
    new)."""
    return feed if highest is None else feed.where(F.col(BATCH) > F.lit(highest))


def ledger_increment(
    feed: DataFrame,
    prior: DataFrame | None,
    config: SourceConfig,
    process_id: str,
    highest: int | None = None,
) -> DataFrame:
    """Ledger rows for the feed's batches that ``prior`` (the ledger so far) does not hold;
    ``highest``: the prior ledger's highest batch when the caller has read it (None: read here;
    a feed already cut to the batches above it is cut again, harmlessly)."""
    if prior is not None:
        if highest is None:
            highest = latest_batch(prior)
        feed = new_batches(feed, highest)
    if config.sequence_by:
        feed = with_sequence(feed, config.sequence_by)
    # Kept: read by the ledger rows, the column sets and (with a lateness) the per-batch
    # watermarks, and filtered on its reason (which the optimizer would otherwise inline into
    # every filter).
    events = keep(
        normalize_events(feed, config.schema, truncates=config.truncate == "apply"),
        "change_events.ledger_events",
    )
    if config.allowed_lateness is None:
        # No event is ever too late: every batch's watermark is null, without a pass over the
        # batches (or over the prior ledger's).
        events = events.withColumn("watermark", F.lit(None).cast("timestamp"))
    else:
        events = _with_watermarks(events, feed, prior, config.allowed_lateness, highest)
        late = F.col(REASON).isNull() & (F.col("event_ts") < F.col("watermark"))
        events = events.withColumn(REASON, F.when(late, F.lit("too_late")).otherwise(F.col(REASON)))
    if config.evolve_columns:
        typed = COLUMN_TYPES in events.columns
        columns = [BATCH, "change_kind", "column_names", REASON]
        known: DataFrame | None = events.select(*columns, *([COLUMN_TYPES] if typed else []))
        if prior is not None:
            # A column set of declared names only cannot conflict: the ledger so far (for the
            # columns discovered before) is read only when the increment brings another name.
            if _declared_names_only(known, config):
                known = None
            else:
                earlier = prior.select(*columns)
                if typed:  # a ledger written before the source typed its columns: none
                    given = F.col(COLUMN_TYPES) if COLUMN_TYPES in prior.columns else F.lit(None)
                    earlier = prior.select(
                        *columns, given.cast("array<string>").alias(COLUMN_TYPES)
                    )
                known = earlier.unionByName(known)
        if known is not None:
            conflict = conflict_reason(discovery_of(known, config), typed)
            events = events.withColumn(REASON, F.coalesce(F.col(REASON), conflict))
    first = Window.partitionBy("event_fingerprint", F.col(REASON).isNull()).orderBy(BATCH)
    repeated = F.col(REASON).isNull() & (F.row_number().over(first) > 1)
    events = events.withColumn("_repeated", repeated)
    if prior is not None:
        seen = prior.where(F.col("status") == "applied")
        # Only this increment's own fingerprints are looked up in the ledger so far (a small
        # increment is broadcast): the earlier events are read, not shuffled. An exact
        # duplicate has its original's event_ts (the fingerprint covers it), so only the
        # earlier events within the increment's time span (and at or after its lowest
        # watermark, with a lateness) are read (the ledger's files keep event_ts statistics).
        # The bounds come from one pass over the increment.
        valid_ts = F.when(F.col(REASON).isNull(), F.col("event_ts"))
        earliest, latest, horizon = events.agg(
            F.min(valid_ts), F.max(valid_ts), F.min("watermark")
        ).first()
        if config.allowed_lateness is not None and horizon is not None:
            seen = seen.where(F.col("event_ts") >= F.lit(horizon))
        fresh = events.where(F.col(REASON).isNull()).select("event_fingerprint", "event_ts")
        if earliest is not None:
            seen = seen.where(F.col("event_ts").between(F.lit(earliest), F.lit(latest)))
        fresh = fresh.select("event_fingerprint")
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
        F.when(F.col(REASON) == TOMBSTONE, F.lit("skipped"))
        .when(F.col(REASON).isNotNull(), F.lit("quarantined"))
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


def _new_rows(ledger: DataFrame, process_id: str, resolved_through: int | None) -> DataFrame:
    """The ledger rows a history run takes in: above the mark (without one: this run's)."""
    if resolved_through is None:
        return ledger.where(F.col("process_id") == process_id)
    return ledger.where(F.col(BATCH) > F.lit(resolved_through))


def increment_bounds(
    ledger: DataFrame, process_id: str, resolved_through: int | None = None
) -> tuple[datetime | None, int | None]:
    """(horizon, latest batch) of the ledger rows a history run takes in, from one pass: the
    earliest event_ts of their applied events (every history version the run changes was live
    at or after it; None when it applies nothing) and their highest batch (None: no rows)."""
    applied_ts = F.when(F.col("status") == "applied", F.col("event_ts"))
    rows = _new_rows(ledger, process_id, resolved_through)
    horizon, latest = rows.agg(F.min(applied_ts), F.max(BATCH)).first()
    return horizon, latest


def increment_horizon(
    ledger: DataFrame, process_id: str, resolved_through: int | None = None
) -> datetime | None:
    """The horizon of increment_bounds alone."""
    return increment_bounds(ledger, process_id, resolved_through)[0]


def history_increment(
    ledger: DataFrame,
    prior: DataFrame | None,
    initial: DataFrame | None,
    config: SourceConfig,
    high_dttm: str,
    process_id: str,
    resolved_through: int | None = None,
    horizon: datetime | None = None,
) -> DataFrame:
    """History versions to merge (on the key columns and version_id) for the ledger batches above
    ``resolved_through`` (the history's mark, see progress; without one, the batches this run
    ``process_id`` ledgered); all versions when ``prior`` is None (a full build). ``horizon``:
    the increment's, when the caller has it already (increment_horizon; with tracked columns
    then lowered, tracked.lowered_horizon), else read here.

    An increment re-resolves only what its new applied events can change. Its *horizon* H is the
    earliest event_ts among them: a version depends only on the actions at or before its own
    position (and its valid_to on the next one), so every version that ends before H stays as
    it is. The keys re-resolved are the keys the new events act on, grown by every key that an
    applied event at or after H moves to or from one of them (a move-in inherits created_at
    across keys); for those keys the applied events at or after H are resolved again, starting
    from their versions live at H (and existing rows restored at or after H). No other key's
    versions can change. An in-order increment thus reads its own events and the open versions
    of the history (not its closed ones); a late event reaches back to its own time, for its
    keys only. A truncate (a source whose ``truncate`` is ``apply``) acts on every key
    live at its position: an increment holding one resolves every key again from its versions
    live at the horizon. With tracked columns (change_events.tracked) the horizon is first
    lowered before every version that took a change at or after it in place, and the stored
    versions from the horizon on that the increment no longer holds come back flagged
    ``_is_deleted`` (tombstones for the MERGE)."""
    declared = config.schema
    new_rows = _new_rows(ledger, process_id, resolved_through)
    if prior is not None:
        if horizon is None:
            horizon = increment_horizon(ledger, process_id, resolved_through)
            if horizon is not None and config.tracked_columns() is not None:
                horizon = lowered_horizon(prior, horizon)
        if horizon is None:
            nothing = prior.limit(0)
            if config.tracked_columns() is None:
                return nothing
            return nothing.withColumn(DELETE_FLAG, F.lit(False))  # the MERGE's flag
    if prior is not None and resolved_through is not None:
        # The history reflects the batches up to its mark: only the later ones are read for
        # new columns (not the whole ledger).
        config = evolved_since(config, prior.schema, new_rows)
    else:
        config = evolved_config(config, ledger)
    schema = config.schema
    discovered = [c for c in schema.columns if c not in declared.columns]
    applied = with_discovered_images(
        ledger.where(F.col("status") == "applied"), declared, discovered, schema
    )
    tracked = config.tracked_columns(schema)
    if prior is None:
        base = None if initial is None else initial_versions(initial, schema, process_id)
        return _resolved(
            _as_resolved(applied, config), base, config, high_dttm, process_id, tracked=tracked
        )
    since = F.col("event_ts") >= F.lit(horizon)
    landed = applied.where(since)
    if resolved_through is None:
        fresh = landed.where(F.col("process_id") == process_id)
    else:
        fresh = landed.where(F.col(BATCH) > F.lit(resolved_through))
    # the two halves of a key change share their event_ts: both are in the window or neither;
    # the keys are taken from the fresh halves before pairing (a pair is the insert's row, whose
    # batch may be the older one)
    window = keep(_as_resolved(landed, config), "change_events.history_window")
    keys, moves = linked_keys(action_keys(fresh, schema), window, schema)
    live_at_horizon = _live_at(prior, horizon, initial, schema, process_id, tracked)
    truncates = window.where(F.col("change_kind") == TRUNCATE)
    replaced = prior.where(F.col("valid_from") >= F.lit(horizon))
    if config.truncate == "apply" and not truncates.isEmpty():
        # A truncate acts on every key live at its position: all of them are resolved again.
        base = live_at_horizon
        events = window
    else:
        events = on_keys(window, keys, schema)
        on_them = F.broadcast(key_columns_of(keys, schema))
        base = live_at_horizon.join(on_them, list(schema.keys), "left_semi")
        replaced = replaced.join(on_them, list(schema.keys), "left_semi")
    versions = _resolved(
        events,
        base.select(
            *_columns(base, schema),
            *VERSION_COLUMNS,
            *([POSITION] if POSITION in base.columns else []),
            *([CHANGED_AT] if CHANGED_AT in base.columns else []),
        ),
        config,
        high_dttm,
        process_id,
        moves,  # the window's moves: those of the events resolved, or more
        tracked,
    )
    # With tracked columns a stored version the increment resolved again may be gone (absorbed
    # after a late event): flagged for the MERGE to delete.
    return versions if tracked is None else with_tombstones(versions, replaced, schema)


def _live_at(
    prior: DataFrame,
    horizon: datetime,
    initial: DataFrame | None,
    schema: TargetSchema,
    process_id: str,
    tracked: tuple[str, ...] | None,
) -> DataFrame:
    """The stored versions an increment resolves from: those live at ``horizon``, and the
    existing rows restored at or after it. With tracked columns such a restored row may have
    taken later changes in place: it is read from the existing rows ``initial`` instead."""
    live = (F.col("valid_from") < F.lit(horizon)) & (F.col("valid_to") >= F.lit(horizon))
    restored = (F.col("version_id") == INITIAL_VERSION) & (F.col("valid_from") >= F.lit(horizon))
    if tracked is None or initial is None:
        return prior.where(live | restored)
    rows = initial_versions(initial, schema, process_id).where(
        F.col("valid_from") >= F.lit(horizon)
    )
    return prior.where(live).unionByName(rows, allowMissingColumns=True)


def _as_resolved(applied: DataFrame, config: SourceConfig) -> DataFrame:
    """Applied ledger events as the resolver takes them: key changes sent as two events paired
    into one update, then (partial updates) an update's NULL columns listed as unchanged, the
    reference's order too."""
    paired = pair_key_changes(applied, config.schema)
    if config.ignore_null_updates:
        return with_null_updates_kept(paired, config.schema)
    return paired


def _resolved(
    events: DataFrame,
    base: DataFrame | None,
    config: SourceConfig,
    high_dttm: str,
    process_id: str,
    moves: KeyMoves | None = None,
    tracked: tuple[str, ...] | None = None,
) -> DataFrame:
    truncates = config.truncate == "apply"
    versions = resolve_versions(
        events, config.schema, high_dttm, base, process_id, truncates, moves, tracked
    )
    # Quoted: a discovered column's name may hold a dot (``a.b``), which F.col would split.
    content = [column(c) for c in versions.columns if c != "process_id"]
    return versions.withColumn("row_hash", F.md5(F.to_json(F.struct(*content))))


def merge_versions(prior: DataFrame, changes: DataFrame, schema: TargetSchema) -> DataFrame:
    """What MERGE on (keys, version_id) leaves: ``changes`` replace or add rows of ``prior``;
    a change flagged ``_is_deleted`` (tracked columns' tombstones) deletes its row."""
    on = [*schema.keys, "version_id"]
    kept = prior.join(changes.select(*on), on, "left_anti")
    if DELETE_FLAG in changes.columns:
        changes = changes.where(~F.col(DELETE_FLAG)).drop(DELETE_FLAG)
    return kept.unionByName(changes, allowMissingColumns=True)
