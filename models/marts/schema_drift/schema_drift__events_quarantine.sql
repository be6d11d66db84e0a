{{ config(materialized='table') }}

-- Bronze events of events kept out of silver, with why.
{{ spark_cdc.schema_drift_quarantine(
    ref('int_schema_drift__events_bronze'),
    ref('schema_drift__events_registry')
) }}
