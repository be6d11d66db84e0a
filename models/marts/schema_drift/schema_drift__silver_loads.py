"""Silver tables, one per event type (created, evolved or rebuilt as their superset changes),
and the log of what each run wrote to them (this model's rows)."""

from spark_cdc.dbt_context import process_id
from spark_cdc.schema_drift.silver import refresh_silver


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    meta = dbt.config.get("meta")
    bronze = dbt.ref("int_schema_drift__bronze_events")
    registry = dbt.ref("schema_drift__schema_registry")
    log = session.table(str(dbt.this)) if dbt.is_incremental else None
    return refresh_silver(
        session,
        bronze,
        registry,
        log,
        str(dbt.this),
        dbt.this.schema,
        meta["schema_drift"]["silver_table_prefix"],
        process_id(session),
    )
