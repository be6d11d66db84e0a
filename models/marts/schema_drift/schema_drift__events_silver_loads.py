"""Silver tables of events, one per event type (created, evolved or rebuilt as their superset
changes), and the log of what each run wrote to them (this model's rows)."""

from spark_cdc.dbt_models import schema_drift


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    meta = dbt.config.get("meta")
    bronze = dbt.ref("int_schema_drift__events_bronze")
    registry = dbt.ref("schema_drift__events_registry")
    return schema_drift.silver_loads(dbt, session, meta, bronze, registry)
