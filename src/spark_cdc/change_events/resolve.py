"""Resolve change events into per-key versions with window functions (no fixpoint over events).

Every valid, de-duplicated event becomes actions on keys:

- insert / update -> an upsert (U) of the image at the image's key;
- delete -> a delete (D) at the old key;
- an update whose old key differs from the image's key -> also a D at the old key ("move out"),
  and its U at the new key is a "move in".

Applied one by one in position order (event_position, event_ts, event_seq, fingerprint; an event
without an event_position before any with one), the value of a key only
depends on the last action on that key, so one window over the actions partitioned by key gives
every version (valid_from = its position, valid_to = the next action's, is_current = last).
The fingerprint is compared as its 32 bytes, in the same order as its hex text (half the bytes to
shuffle and sort).

created_at crosses keys (and so does a column an upsert leaves unchanged, below). Within a key,
consecutive upserts form a *run* that shares created_at; a run starts at an upsert after nothing
or a delete (created_at = its event_ts), at a restored row (its stored created_at) or at a move
in. A move in inherits created_at from the source key's run when the source row was live (the
move-out D's previous action is a U), otherwise from the key's own previous run when that was
live, otherwise it is its own event_ts. These "inherits from" links exist for key-changing
events only; pointer jumping resolves chains of L links in ceil(log2 L) broadcast self-joins of
that link table; a feed in which no event changes a key does no link work at all.

A column an upsert leaves unchanged (``unchanged_columns``: an unchanged TOASTed value) takes
the run's latest value sent before it; in a move-in run with nothing sent before it, the value
the move-in's parent run last held (the same links as created_at), hop by hop along a chain of
moves that each left it unchanged; only feeds with such a move do that work.

Restored rows (``base``: initial rows, or versions live at an incremental run's horizon) are
actions positioned at their valid_from, before any event of that instant, with their stored
values, created_at and identity.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_cdc.change_events.inheritance import (
    inherited_values,
    leaves_unchanged,
    links_of,
    resolve_links,
    with_inherited,
)
from spark_cdc.change_events.key_changes import OUT_FINGERPRINT, pair_key_changes
from spark_cdc.change_events.model import TRUNCATE, TargetSchema
from spark_cdc.change_events.normalize import POSITION, UNCHANGED_COLUMNS
from spark_cdc.change_events.tracked import CHANGED_AT, absorb_untracked
from spark_cdc.core.cache_slots import keep, release
from spark_cdc.hash_cdc.hashing import column

BEFORE_ANY_EVENT = -(2**63)
# The order of a key's actions: position (null first), time, sequence, fingerprint.
ORDER = ("_pos", "_ts", "_seq", "_fp")
VERSION_COLUMNS = (
    "created_at",
    "valid_from",
    "valid_to",
    "change_type",
    "is_deleted",
    "is_current",
    "event_seq",
    "event_fingerprint",
    "version_id",
    "is_ambiguous",
    "process_id",
)


def key_struct(source: Column, schema: TargetSchema) -> Column:
    """The key columns of ``source`` (an image or an old key) as one struct."""
    return F.struct(*(source[k].alias(k) for k in schema.keys))


def moves_a_key(schema: TargetSchema) -> Column:
    """Whether an event moves its key (an update whose image key differs from its old key)."""
    moved = F.col("old_key") != key_struct(F.col("image"), schema)
    return (F.col("change_kind") == "update") & moved


@dataclass(frozen=True)
class KeyMoves:
    """What the caller already knows of the key moves among a resolution's events: whether any
    event may move a key, and whether any such move may leave a column unchanged. True is always
    safe (the link work then finds nothing to do); False must be exact."""

    any: bool
    leave_unchanged: bool


def _actions(
    events: DataFrame, base: DataFrame | None, schema: TargetSchema, truncates: bool = False
) -> DataFrame:
    """One row per action: _key, position, kind, values and the identity of its version."""
    image_key = key_struct(F.col("image"), schema)
    moves = moves_a_key(schema)
    no_names = F.lit(None).cast("array<string>")
    unchanged = F.col(UNCHANGED_COLUMNS) if UNCHANGED_COLUMNS in events.columns else no_names
    # a paired key change's move-out keeps the delete's identity (change_events.key_changes)
    out = F.col(OUT_FINGERPRINT) if OUT_FINGERPRINT in events.columns else F.lit(None)
    common = {
        "_pos": _position(events),
        "_ts": F.col("event_ts"),
        "_seq": F.coalesce(F.col("event_seq"), F.lit(0)).cast("long"),
        "_fp": F.unhex(F.col("event_fingerprint")),
        "event_seq": F.col("event_seq").cast("long"),
        "_restore": F.lit(False),
        "_restore_created": F.lit(None).cast("timestamp"),
        "_stored_changed": F.lit(None).cast("timestamp"),  # a restored version's changed_at
        "_stored_version": F.lit(None).cast("string"),
        "is_ambiguous_stored": F.lit(None).cast("boolean"),
        "_truncate": F.lit(False),
        # a paired key change's move-out version keeps the delete's identity (key_changes)
        "_out_fp": F.lit(None).cast("binary"),
    }
    upserts = events.where(F.col("change_kind").isin("insert", "update")).select(
        unchanged.alias("_unchanged"),
        image_key.alias("_key"),
        F.lit("U").alias("_kind"),
        F.col("change_kind").alias("change_type"),
        F.col("image").alias("_values"),
        F.when(moves, F.col("old_key")).alias("_src"),
        F.lit(False).alias("_is_out"),
        *(column.alias(name) for name, column in common.items()),
    )
    deletes = events.where((F.col("change_kind") == "delete") | moves).select(
        no_names.alias("_unchanged"),
        F.col("old_key").alias("_key"),
        F.lit("D").alias("_kind"),
        F.lit("delete").alias("change_type"),
        F.lit(None).alias("_values"),
        F.lit(None).alias("_src"),
        (F.col("change_kind") == "update").alias("_is_out"),
        *(column.alias(name) for name, column in common.items() if name != "_out_fp"),
        F.unhex(out.cast("string")).alias("_out_fp"),
    )
    actions = upserts.unionByName(
        deletes.withColumn(
            "_values", F.col("_values").cast(upserts.schema["_values"].dataType)
        ).withColumn("_src", F.col("_src").cast(upserts.schema["_src"].dataType))
    )
    if base is not None:
        actions = actions.unionByName(_restored(base, schema, actions))
    if truncates:
        actions = actions.unionByName(_truncations(events, actions, common))
    return actions


def _position(frame: DataFrame) -> Column:
    """The frame's event_position (null when it has none)."""
    if POSITION in frame.columns:
        return F.col(POSITION).cast("array<bigint>")
    return F.lit(None).cast("array<bigint>")


def _truncations(events: DataFrame, actions: DataFrame, common: dict) -> DataFrame:
    """A delete of every key of ``actions`` at each truncate's position (_truncate: kept only
    where the key is live then, see _windowed)."""
    keys = actions.select("_key").distinct()
    return (
        events.where(F.col("change_kind") == TRUNCATE)
        .select(
            F.lit(None).cast("array<string>").alias("_unchanged"),
            F.lit("D").alias("_kind"),
            F.lit(TRUNCATE).alias("change_type"),
            F.lit(None).cast(actions.schema["_values"].dataType).alias("_values"),
            F.lit(None).cast(actions.schema["_src"].dataType).alias("_src"),
            F.lit(False).alias("_is_out"),
            *(
                column.alias(name)
                for name, column in common.items()
                if name not in ("_truncate", "_out_fp", "_stored_changed")
            ),
            F.lit(True).alias("_truncate"),
            F.lit(None).cast("binary").alias("_out_fp"),
            F.lit(None).cast("timestamp").alias("_stored_changed"),
        )
        .crossJoin(keys)
    )


def _restored(base: DataFrame, schema: TargetSchema, actions: DataFrame) -> DataFrame:
    """The base's rows as actions at their valid_from, before any event of that instant."""
    return base.select(
        F.lit(None).cast("array<string>").alias("_unchanged"),
        key_struct(F.struct(*(column(k) for k in schema.keys)), schema).alias("_key"),
        F.when(F.col("is_deleted"), F.lit("D")).otherwise(F.lit("U")).alias("_kind"),
        F.col("change_type"),
        F.when(~F.col("is_deleted"), F.struct(*(column(c) for c in schema.columns))).alias(
            "_values"
        ),
        F.lit(None).cast(actions.schema["_src"].dataType).alias("_src"),
        F.lit(False).alias("_is_out"),
        _position(base).alias("_pos"),
        F.col("valid_from").alias("_ts"),
        F.lit(BEFORE_ANY_EVENT).cast("long").alias("_seq"),
        F.coalesce(F.unhex(F.col("event_fingerprint")), F.lit(bytearray())).alias("_fp"),
        F.col("event_seq").cast("long"),
        F.lit(True).alias("_restore"),
        F.col("created_at").alias("_restore_created"),
        F.col("version_id").alias("_stored_version"),
        F.col("is_ambiguous").alias("is_ambiguous_stored"),
        F.lit(False).alias("_truncate"),
        F.lit(None).cast("binary").alias("_out_fp"),
        F.col(CHANGED_AT if CHANGED_AT in base.columns else "valid_from").alias("_stored_changed"),
    )


def _windowed(
    actions: DataFrame, schema: TargetSchema, truncates: bool = False, fills: bool = False
) -> DataFrame:
    """Per-key window: duplicates dropped, then runs, versions' valid_to, ambiguity, move-in and
    move-out facts (one shuffle: every window shares the key partitioning and order; three
    window passes: duplicates, neighbours, running run facts)."""
    by_key = Window.partitionBy("_key").orderBy(*ORDER)
    running = by_key.rowsBetween(Window.unboundedPreceding, Window.currentRow)

    def same_position(offset: int) -> Column:
        clash = (
            F.lag("_pos", offset).over(by_key).eqNullSafe(F.col("_pos"))
            & (F.lag("_ts", offset).over(by_key) == F.col("_ts"))
            & (F.lag("_seq", offset).over(by_key) == F.col("_seq"))
            & (F.lag("_fp", offset).over(by_key) != F.col("_fp"))
        )
        return F.coalesce(clash, F.lit(False))

    repeated = F.coalesce(F.lag("_fp").over(by_key) == F.col("_fp"), F.lit(False))
    unique = actions.withColumn("_repeated", repeated).where(~F.col("_repeated"))
    if truncates:
        # A truncate deletes the keys live at its position only (after an upsert).
        live = F.coalesce(F.lag("_kind").over(by_key), F.lit("D")) == "U"
        unique = unique.withColumn("_live", live).where(~F.col("_truncate") | F.col("_live"))
    neighbours = unique.select(
        *actions.columns,
        F.lag("_kind").over(by_key).alias("_prev_kind"),
        F.lead("_ts").over(by_key).alias("_next_ts"),
        (same_position(1) | same_position(-1)).alias("_ambiguous"),
    )
    reset = (F.col("_kind") == "U") & (
        F.col("_restore")
        | F.col("_prev_kind").isNull()
        | (F.col("_prev_kind") == "D")
        | F.col("_src").isNotNull()
    )
    start_created = F.when(F.col("_restore"), F.col("_restore_created")).when(
        F.col("_src").isNull(), F.col("_ts")
    )
    starts = neighbours.withColumn("_reset", reset)
    runs = starts.select(
        "*",
        F.sum(F.col("_reset").cast("long")).over(running).alias("_run"),
        F.last(F.when(F.col("_reset"), F.struct(start_created.alias("c"))), True)
        .over(running)
        .getField("c")
        .alias("_run_created"),
    )
    return _filled(runs, schema) if fills else runs


def _filled(runs: DataFrame, schema: TargetSchema) -> DataFrame:
    """Upserts' unchanged columns (``_unchanged``) take the run's latest value sent before them:
    the previous version's (a restored row's too); null when the run has none."""
    in_run = (
        Window.partitionBy("_key", "_run")
        .orderBy(*ORDER)
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    unchanged = F.coalesce(F.col("_unchanged"), F.array().cast("array<string>"))
    values, unsent = [], []
    for c in schema.columns:
        value = F.col("_values")[c]
        if c not in schema.keys:
            sent = F.when(
                (F.col("_kind") == "U") & ~F.array_contains(unchanged, c),
                F.struct(value.alias("v")),
            )
            previous = F.last(sent, True).over(in_run)
            left = F.array_contains(unchanged, c)
            value = F.when(left, previous.getField("v")).otherwise(value)
            unsent.append(F.when(left & previous.isNull(), F.lit(c)))
        values.append(value.alias(c))
    filled = F.when(F.col("_values").isNotNull(), F.struct(*values))
    never_sent = F.filter(F.array(*unsent, F.lit(None).cast("string")), lambda c: c.isNotNull())
    return runs.withColumn("_values", filled.cast(runs.schema["_values"].dataType)).withColumn(
        "_unsent", never_sent
    )


def _partitions(spark) -> int:
    """Partitions of the resolver's shuffle: more than the session's few, so that each sort
    stays in memory (measured: 4-8x the cores is about 1.5x faster than 2 at 1M events)."""
    configured = int(spark.conf.get("spark.sql.shuffle.partitions"))
    # The session's settings, not its SparkContext: a Spark Connect client has none.
    cores = int(spark.conf.get("spark.default.parallelism", str(configured)))
    return max(configured, 4 * cores)


def resolve_versions(
    events: DataFrame,
    schema: TargetSchema,
    high_dttm: str,
    base: DataFrame | None = None,
    process_id: str = "adhoc",
    truncates: bool = False,
    moves: KeyMoves | None = None,
    tracked: tuple[str, ...] | None = None,
) -> DataFrame:
    """Every version of every key touched by ``events`` (and ``base``), see the module doc.

    ``events``: valid normalized events (normalize.normalize_events); exact duplicates apply
    once. ``base``: rows in the versions' shape to restore first, or None. ``truncates``:
    whether ``truncate`` events act (a delete of every key live at their position, change_type
    ``truncate``). ``moves``: what the caller knows of the events' key moves (None: asked of the
    events here). ``tracked``: the columns whose change opens a version (None: every change
    does; else the versions also get ``changed_at``, change_events.tracked). Output: the target
    columns then VERSION_COLUMNS, every row stamped with ``process_id``.
    """
    actions = _actions(events, base, schema, truncates)
    # event_position is a column of the versions when the events or the base have one
    positioned = POSITION in events.columns or (base is not None and POSITION in base.columns)
    fills = UNCHANGED_COLUMNS in events.columns
    acts = _windowed(
        actions.repartition(_partitions(actions.sparkSession), "_key"), schema, truncates, fills
    )
    any_move = moves.any if moves is not None else not events.where(moves_a_key(schema)).isEmpty()
    if not any_move:
        # No event moves a key: no run inherits created_at from another, no link work, and the
        # windowed actions have one reader (the output), so they are not kept (asked of the
        # events, not of the windowed actions: 1M events without a move, 7.1-7.6 s -> 6.4-6.6 s).
        release("change_events.actions")  # what a keep here would have replaced
        resolved = acts.withColumn("link_created", F.lit(None).cast("timestamp"))
    else:
        acts = keep(acts, "change_events.actions")
        moved_links = links_of(acts)
        links = resolve_links(acts, moved_links)
        resolved = acts.join(
            F.broadcast(links),
            (F.col("_key") == F.col("node_key")) & (F.col("_run") == F.col("node_run")),
            "left",
        )
        leave_unchanged = fills and (
            moves.leave_unchanged
            if moves is not None
            else not events.where(moves_a_key(schema) & leaves_unchanged(events)).isEmpty()
        )
        if leave_unchanged:
            resolved = with_inherited(resolved, inherited_values(acts, moved_links, schema, ORDER))
    fingerprint = F.lower(F.hex("_fp"))
    upsert = F.col("_kind") == "U"
    columns = [
        (F.col("_key")[c] if c in schema.keys else F.col("_values")[c]).alias(c)
        for c in schema.columns
    ]
    versions = resolved.select(
        *columns,
        F.when(upsert, F.coalesce("_run_created", "link_created")).alias("created_at"),
        F.col("_ts").alias("valid_from"),
        F.coalesce(F.col("_next_ts"), F.to_timestamp(F.lit(high_dttm))).alias("valid_to"),
        "change_type",
        (~upsert).alias("is_deleted"),
        F.col("_next_ts").isNull().alias("is_current"),
        "event_seq",
        *([F.col("_pos").alias(POSITION)] if positioned else []),
        F.when(F.length("_fp") > 0, fingerprint).alias("event_fingerprint"),
        F.when(F.col("_restore"), F.col("_stored_version"))
        .when(F.col("_out_fp").isNotNull(), F.lower(F.hex("_out_fp")))
        .when(F.col("_is_out"), F.concat(fingerprint, F.lit(":out")))
        .otherwise(fingerprint)
        .alias("version_id"),
        F.coalesce("is_ambiguous_stored", "_ambiguous").alias("is_ambiguous"),
        F.lit(process_id).alias("process_id"),
        *(
            [F.coalesce("_stored_changed", "_ts").alias(CHANGED_AT), *ORDER]
            if tracked is not None
            else []
        ),
    )
    if tracked is None:
        return versions
    return absorb_untracked(versions, schema, tracked, list(ORDER)).drop(*ORDER)


def _as_current(versions: DataFrame, schema: TargetSchema, *extra: Column) -> DataFrame:
    """Versions in the current table's shape (plus ``extra`` columns); a row was last updated
    at its version's latest change (``changed_at``, with tracked columns) or opening."""
    updated = F.col("valid_from")
    if CHANGED_AT in versions.columns:  # NULL in a version kept before columns were tracked
        updated = F.coalesce(F.col(CHANGED_AT), updated)
    return versions.select(
        *(column(c) for c in schema.columns),
        "created_at",
        updated.alias("updated_at"),
        F.col("change_type").alias("last_change_type"),
        "process_id",
        *extra,
    )


def current_rows(versions: DataFrame, schema: TargetSchema) -> DataFrame:
    """The current state: each key's last version when it is not a delete."""
    return _as_current(versions.where(F.col("is_current") & ~F.col("is_deleted")), schema)


def current_changes(
    versions: DataFrame, schema: TargetSchema, process_ids: str | list[str] | None = None
) -> DataFrame:
    """Current versions of ``versions`` (only those last written by the runs ``process_ids``,
    when given), flagged ``_is_deleted`` for a MERGE that deletes (macros/incremental/merge.sql,
    merge_delete_column)."""
    changed = versions.where(F.col("is_current"))
    if process_ids is not None:
        ids = [process_ids] if isinstance(process_ids, str) else list(process_ids)
        changed = changed.where(F.col("process_id").isin(ids))
    return _as_current(changed, schema, F.col("is_deleted").alias("_is_deleted"))


# What resolve_versions reads of a normalized event (normalize.normalize_events).
RESOLVER_INPUTS = frozenset(
    (
        "change_kind",
        "event_ts",
        "event_seq",
        POSITION,
        "event_fingerprint",
        "image",
        "old_key",
        UNCHANGED_COLUMNS,
    )
)


def resolve_feed(
    feed: DataFrame,
    schema: TargetSchema,
    high_dttm: str,
    initial: DataFrame | None = None,
    process_id: str = "adhoc",
) -> tuple[DataFrame, DataFrame]:
    """One-shot resolution of a whole feed: (versions, quarantined events).

    ``feed``: raw events (normalize.FEED_COLUMNS); ``initial``: existing rows in the versions'
    shape (pipeline.initial_versions) or None. Exact duplicates apply once (dropped inside the
    resolver's window); the current state is current_rows(versions)."""
    from spark_cdc.change_events.normalize import REASON, normalize_events

    inputs = RESOLVER_INPUTS | {REASON}

    events = normalize_events(feed, schema)
    # Only a quarantined event needs the feed's own columns (the quarantine shows them as they
    # came): a valid event keeps what the resolver reads, so the kept frame is narrow.
    events = events.select(
        *(
            F.col(c) if c in inputs else F.when(F.col(REASON).isNotNull(), F.col(c)).alias(c)
            for c in events.columns
        )
    )
    # Kept: both outputs filter on the reason, which the optimizer would otherwise inline into
    # each filter (every image text and cast evaluated again).
    events = keep(events, "change_events.normalized")
    valid = pair_key_changes(events.where(F.col(REASON).isNull()), schema)
    versions = resolve_versions(valid, schema, high_dttm, initial, process_id)
    return versions, events.where(F.col(REASON).isNotNull())
