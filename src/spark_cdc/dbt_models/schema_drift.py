"""Entry points of a JSON feed's Python models: bronze, schema registry, silver tables.

Settings (``meta.schema_drift``): ``feed`` (its name), ``silver_table_prefix`` (silver tables
are ``<schema of the silver-loads model>.<prefix><event type>``) and, on the silver-loads model,
``event_groups`` (group name -> selectors, :mod:`spark_cdc.schema_drift.event_groups`) for a
feed whose silver runs as one stream per group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.core.changed_rows import record_changed_from
from spark_cdc.core.dbt_context import process_id
from spark_cdc.core.idempotent_loads import claim_next_write, load_identity, next_load
from spark_cdc.dbt_models.settings import SettingsError, block
from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.event_groups import parse_grouping
from spark_cdc.schema_drift.grouping_table import refuse_ungrouped
from spark_cdc.schema_drift.landed_files import taken_files
from spark_cdc.schema_drift.registry import registry_increment
from spark_cdc.schema_drift.silver import (
    METADATA_COLUMNS,
    drop_started_rows,
    refresh_silver,
    write_guard,
)
from spark_cdc.schema_drift.stream import FeedTables


def settings(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The feed's ``schema_drift`` block."""
    found = block(meta, "schema_drift", "feed")
    if not str(found.get("silver_table_prefix") or "").strip():
        raise SettingsError(f"schema_drift feed {found['feed']}: silver_table_prefix is not set")
    parse_grouping(found.get("event_groups"))  # a malformed grouping fails every model
    return found


def _prior(dbt: Any, session: SparkSession) -> DataFrame | None:
    return session.table(str(dbt.this)) if dbt.is_incremental else None


def bronze(dbt: Any, session: SparkSession, meta: Mapping[str, Any], raw: DataFrame) -> DataFrame:
    """The lines landed since the last run, as the next bronze load."""
    settings(meta)
    if dbt.is_incremental:
        # Claimed before bronze is read: an overlapping run (or the stream) claims the same
        # load, and Delta lets only one of the two write (spark_cdc.core.idempotent_loads).
        table = str(dbt.this)
        claim_next_write(session, load_identity("bronze", table), next_load(session, table))
        # The files bronze holds, from its file log (not from bronze's every line).
        taken = taken_files(session, table)
        prior = session.table(table)
        highest = prior.agg(F.max("load_seq")).first()[0]
        if highest is not None:  # the model's tests read this load (spark_cdc.core.changed_rows)
            record_changed_from(session, "load_seq", int(highest) + 1)
        return bronze_increment(raw, prior, process_id(session), taken_files=taken)
    return bronze_increment(raw, None, process_id(session))


def registry(
    dbt: Any, session: SparkSession, meta: Mapping[str, Any], bronze: DataFrame
) -> DataFrame:
    """Registry rows of the bronze loads not registered yet."""
    settings(meta)
    existing = _prior(dbt, session)
    return registry_increment(session, bronze, existing, process_id(session), METADATA_COLUMNS)


def silver_loads(
    dbt: Any, session: SparkSession, meta: Mapping[str, Any], bronze: DataFrame, registry: DataFrame
) -> DataFrame:
    """Writes the feed's silver tables; returns the log rows of what it wrote."""
    feed_settings = settings(meta)
    prefix = str(feed_settings["silver_table_prefix"])
    # While event groups run, their queries write silver (a build beside them would conflict
    # with them table by table): refused before anything is written.
    tables = FeedTables(dbt.this.schema, str(feed_settings["feed"]), prefix)
    refuse_ungrouped(session, tables.event_groups, str(dbt.this))
    if dbt.is_incremental:  # a log kept by an older release: its marker rows go first
        drop_started_rows(session, str(dbt.this))
    log = _prior(dbt, session)
    return refresh_silver(
        session,
        bronze,
        registry,
        log,
        dbt.this.schema,
        prefix,
        process_id(session),
        guard=None if log is None else write_guard(session, tables.bronze),
    )
