"""The schema registry: one row per event type and variation hash, with its schema version,
prototype and superset schema; each run registers the bronze loads it has not seen."""

from spark_cdc.dbt_context import process_id
from spark_cdc.schema_drift.registry import registry_increment
from spark_cdc.schema_drift.silver import METADATA_COLUMNS


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["event_type", "variation_hash"],
    )
    bronze = dbt.ref("int_schema_drift__bronze_events")
    existing = session.table(str(dbt.this)) if dbt.is_incremental else None
    return registry_increment(session, bronze, existing, process_id(session), METADATA_COLUMNS)
