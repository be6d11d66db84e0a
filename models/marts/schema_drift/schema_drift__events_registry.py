"""The schema registry of events: one row per event type and variation hash, with its schema
version, prototype and superset schema; each run registers the bronze loads it has not seen."""

from spark_cdc.dbt_models import schema_drift


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["event_type", "variation_hash"],
    )
    meta = dbt.config.get("meta")
    bronze = dbt.ref("int_schema_drift__events_bronze")
    return schema_drift.registry(dbt, session, meta, bronze)
