"""Entry points of a change-event source's Python models: ledger, history and current state.

Settings (``meta.change_events``): ``source`` (its name), ``columns`` (name -> Spark type),
``key_columns``, ``allowed_lateness``, ``evolve_columns``, ``track_history`` or
``track_history_except`` (change_events.tracked; the history model then merges with
``merge_delete_column="_is_deleted"``), ``input`` (``events``, the feed
format of change_events.model, or ``debezium``: Debezium messages in a ``value`` column, read
with the connector settings of ``debezium``: change_events.debezium.types.DebeziumSettings) and
``high_dttm`` (the high end date of current versions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.current_only import current_increment, full_current
from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.debezium.types import DebeziumSettings
from spark_cdc.change_events.evolution import add_missing_columns, columns_in
from spark_cdc.change_events.history_feed import enable_feed, versions_since
from spark_cdc.change_events.model import CHANGE_TYPE_PADDING, TRUNCATE
from spark_cdc.change_events.normalize import RAW_RECORD
from spark_cdc.change_events.pipeline import (
    BATCH,
    HISTORY_TABLE_PROPERTIES,
    LEDGER_TABLE_PROPERTIES,
    evolved_since,
    history_increment,
    increment_bounds,
    ledger_increment,
    new_batches,
)
from spark_cdc.change_events.progress import (
    commits_of,
    latest_batch,
    pending_batches,
    pending_process_ids,
    record_progress,
    resolved_through,
)
from spark_cdc.change_events.resolve import current_changes, current_rows
from spark_cdc.change_events.tracked import lowered_horizon
from spark_cdc.core.changed_rows import record_changed_from
from spark_cdc.core.dbt_context import nothing_to_write, process_id
from spark_cdc.core.delta_properties import apply_property_defaults
from spark_cdc.core.idempotent_loads import claim_next_write, load_identity, next_load
from spark_cdc.core.table_names import table_name
from spark_cdc.dbt_models.settings import SettingsError, block

INPUTS = ("events", "debezium")
# Read by the merge of a model with merge_target_floor (macros/incremental/merge.sql).
MERGE_TARGET_FLOOR = "spark_cdc.merge.target_floor"
DEFAULT_HIGH_DTTM = "9999-12-31 23:59:59"
# A full build writes its rows in time order, at most FILE_ROWS to a file (the model's post-hook
# resets the setting), so that an increment's reads by time (the ledger's event_ts, the closed
# versions' valid_to) skip the files of other times, whatever the history's age.
FILE_ROWS_SETTING = "spark.sql.files.maxRecordsPerFile"
FILE_ROWS = 25_000


def settings(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The source's ``change_events`` block."""
    found = block(meta, "change_events", "source")
    if str(found.get("input", "events")) not in INPUTS:
        raise SettingsError(f"change_events.input must be one of {INPUTS}")
    return found


def debezium_settings(meta: Mapping[str, Any] | None) -> DebeziumSettings:
    """The connector settings a Debezium source's messages are read with (``debezium``)."""
    try:
        return DebeziumSettings.from_mapping(settings(meta).get("debezium"))
    except ValueError as error:
        raise SettingsError(str(error)) from error


def source_config(meta: Mapping[str, Any] | None) -> SourceConfig:
    """The source's configuration (name, typed target, lateness, column evolution, partial
    updates, truncates: a plain source's ``truncate``, a Debezium source's
    ``debezium.truncate``)."""
    found = settings(meta)
    config = SourceConfig.from_mapping(str(found["source"]), found)
    if found.get("input") == "debezium":
        config = replace(config, truncate=debezium_settings(meta).truncate)
    return config


def refuse_truncates(feed: DataFrame, source: str, setting: str = "debezium.truncate") -> None:
    """Fail the run, before it writes, when the new events hold a truncate (its change type
    in any case and padding, as normalization reads it)."""
    kind = F.lower(F.btrim(F.col("change_type"), F.lit(CHANGE_TYPE_PADDING)))
    found = feed.where(kind == TRUNCATE).select(BATCH, "event_ts").first()
    if found is not None:
        raise SettingsError(
            f"{source}: batch {found[BATCH]} holds a truncate of the table (at "
            f"{found['event_ts']}) and the source's {setting} is 'refuse': nothing was "
            "written. Take the batch back (docs/bad-input-and-recovery.md) or set "
            f"{setting}: apply to close every live row at the truncate."
        )


def _prior(dbt: Any, session: SparkSession) -> DataFrame | None:
    return session.table(str(dbt.this)) if dbt.is_incremental else None


def in_time_order(session: SparkSession, rows: DataFrame, *columns: str) -> DataFrame:
    """A full build's ``rows`` sorted by ``columns``, written at most FILE_ROWS to a file."""
    session.conf.set(FILE_ROWS_SETTING, str(FILE_ROWS))
    return rows.orderBy(*columns)


def ledger(dbt: Any, session: SparkSession, meta: Mapping[str, Any], feed: DataFrame) -> DataFrame:
    """Ledger rows (every event once, with status and reason) of the batches not ledgered yet.
    A Debezium feed's messages are normalized first; the message is kept as the raw record."""
    config = source_config(meta)
    if dbt.is_incremental:
        # Claimed before the ledger is read: an overlapping run of this source claims the same
        # load, and Delta lets only one of the two write (spark_cdc.core.idempotent_loads).
        table = str(dbt.this)
        claim_next_write(session, load_identity("ledger", table), next_load(session, table))
    prior = _prior(dbt, session)
    highest = None
    if prior is not None:
        # The batches this run ledgers are above the ledger's highest: its tests read those.
        highest = latest_batch(prior)
        if highest is not None:
            record_changed_from(session, BATCH, int(highest) + 1)
            newest = latest_batch(feed)  # file statistics answer both maxima
            if newest is None or newest <= highest:  # no new batch: no write at all
                nothing_to_write(session, str(dbt.this))
    if settings(meta).get("input") == "debezium":
        if prior is not None:
            feed = new_batches(feed, highest)
        feed = normalize_debezium(
            feed, config.schema, debezium_settings(meta), undeclared=config.evolve_columns
        )
        feed = feed.withColumnRenamed("source_message", RAW_RECORD)
        if config.truncate == "refuse":
            refuse_truncates(feed, config.name)
    elif config.truncate == "refuse":
        refuse_truncates(new_batches(feed, highest), config.name, "truncate")
    apply_property_defaults(session, LEDGER_TABLE_PROPERTIES)  # a new table's statistics
    rows = ledger_increment(feed, prior, config, process_id(session), highest)
    return rows if prior is not None else in_time_order(session, rows, "event_ts", BATCH)


def history(
    dbt: Any,
    session: SparkSession,
    meta: Mapping[str, Any],
    ledger: DataFrame,
    initial: DataFrame | None = None,
) -> DataFrame:
    """SCD2 versions to merge: those of the ledger batches the history does not reflect yet
    (all of them on a full build), from the existing rows ``initial`` if the source has any."""
    config = source_config(meta)
    if config.stored_as_scd_type == 1:
        raise SettingsError(
            f"{config.name}: stored_as_scd_type is 1 (current only): the source has no history "
            "model; its current model calls change_events.current_only (spark-cdc add "
            "change-events ... --stored-as-scd-type 1 writes it)"
        )
    high_dttm = str(settings(meta).get("high_dttm") or DEFAULT_HIGH_DTTM)
    prior = _prior(dbt, session)
    through = resolved_through(session, str(dbt.this)) if prior is not None else None
    horizon = latest = None
    if prior is not None:
        # Every version the MERGE changes was live at or after the increment's horizon: the
        # MERGE looks at no closed version that ended before it (macros/incremental/merge.sql).
        # The same pass gives the highest batch the run takes in: the mark its write records
        # (without new rows, the mark stays).
        horizon, latest = increment_bounds(ledger, process_id(session), through)
        if horizon is not None and config.tracked_columns() is not None:
            # before every version that took a change at or after it in place (tracked)
            horizon = lowered_horizon(prior, horizon)
        if horizon is not None:
            session.conf.set(MERGE_TARGET_FLOOR, str(horizon))
    versions = history_increment(
        ledger, prior, initial, config, high_dttm, process_id(session), through, horizon
    )
    # The write's commit records the ledger batches the history now reflects, and for the
    # model's tests the versions it changed: those ending at or after the horizon (with no new
    # applied event, the open versions only).
    if prior is not None:
        # The current table and the run summary read the versions a run wrote from the feed
        # (history_feed); a history built before it had one gets it now, once.
        enable_feed(session, str(dbt.this))
    record_progress(session, latest_batch(ledger) if prior is None else latest)
    if prior is not None:
        record_changed_from(session, "valid_to", horizon if horizon is not None else high_dttm)
    apply_property_defaults(session, HISTORY_TABLE_PROPERTIES)  # a new table's statistics
    if prior is not None:
        return versions
    # Partitioned by is_current: the closed versions' files by valid_to.
    return in_time_order(session, versions, "is_current", "valid_to", "valid_from")


def current(
    dbt: Any, session: SparkSession, meta: Mapping[str, Any], ledger: DataFrame, history: DataFrame
) -> DataFrame:
    """Current rows: all of them on a full build, else the changes of every run whose history
    this table does not reflect yet (a run killed before this model leaves them to the next)."""
    # The history's columns are the source's evolved schema as of the batches it reflects (read
    # from its schema, not from the whole ledger), and all this table can take from it.
    config = source_config(meta)
    if config.evolve_columns:
        config = replace(config, schema=columns_in(config.schema, history.schema))
    if not dbt.is_incremental:
        record_progress(session, latest_batch(ledger))
        return current_rows(history, config.schema)
    # The mark is read before this model writes anything (its ALTER below included).
    through = resolved_through(session, str(dbt.this))
    # Discovered columns are added here rather than by on_schema_change, which would also add
    # the merge's _is_deleted flag to the table.
    add_missing_columns(session, str(dbt.this), config.schema)
    # This table reflects the ledger batches the history it reads reflects (the history's own
    # mark; the ledger's highest batch for a history without one).
    name = table_name(history)
    commits = None if name is None else commits_of(session, name)
    reflected = None if commits is None else resolved_through(session, name, commits)
    record_progress(session, latest_batch(ledger) if reflected is None else reflected)
    # The versions written since the mark, from the history's Change Data Feed (the open
    # versions' files mix every run's rows); without a usable feed, the history's current rows
    # that the runs since the mark wrote.
    changed = None
    if commits is not None:
        changed = versions_since(session, name, config.schema.keys, through, commits)
    if changed is not None:
        return current_changes(changed, config.schema)
    runs = pending_process_ids(ledger, through, process_id(session))
    return current_changes(history, config.schema, runs)


def current_only(
    dbt: Any,
    session: SparkSession,
    meta: Mapping[str, Any],
    ledger: DataFrame,
    initial: DataFrame | None = None,
) -> DataFrame:
    """A current-only source's rows (``stored_as_scd_type: 1``, no history): all of them on a
    full build, else the rows of the keys the ledger batches above the table's mark act on,
    flagged ``_is_deleted`` where the key is gone (change_events.current_only)."""
    config = source_config(meta)
    if config.stored_as_scd_type != 1:
        raise SettingsError(
            f"{config.name}: the current-only model needs stored_as_scd_type: 1 (the source "
            "keeps a history: its current model reads the history)"
        )
    high_dttm = str(settings(meta).get("high_dttm") or DEFAULT_HIGH_DTTM)
    run = process_id(session)
    if not dbt.is_incremental:
        record_progress(session, latest_batch(ledger))
        return full_current(ledger, initial, config, high_dttm, run)
    table = str(dbt.this)
    through = resolved_through(session, table)
    horizon, latest = increment_bounds(ledger, run, through)
    if horizon is None:  # no applied event since the mark: nothing changes
        nothing_to_write(session, table)
        return session.table(table).limit(0).withColumn("_is_deleted", F.lit(False))
    record_progress(session, latest)
    # The columns discovered since the mark are added first (the MERGE writes the table's own).
    evolved = evolved_since(config, session.table(table).schema, pending_batches(ledger, through))
    add_missing_columns(session, table, evolved.schema)
    current = session.table(table)
    return current_increment(ledger, current, initial, config, high_dttm, run, through, horizon)
