"""Bronze: every landed JSON line once, with its event type, variation hash and parse error;
each run appends the files landed since the last one as a new load."""

from spark_cdc.dbt_context import process_id
from spark_cdc.schema_drift.bronze import bronze_increment


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append", full_refresh=False)
    raw = dbt.ref("stg_schema_drift__raw_events")
    existing = session.table(str(dbt.this)) if dbt.is_incremental else None
    return bronze_increment(raw, existing, process_id(session))
