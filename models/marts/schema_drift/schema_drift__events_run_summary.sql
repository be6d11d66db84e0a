{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key=['event_type', 'load_seq']
) }}

-- Per event type and bronze load of events: events in, parsed, quarantined, pending.
{{ spark_cdc.schema_drift_run_summary(
    ref('int_schema_drift__events_bronze'),
    ref('schema_drift__events_registry'),
    ref('schema_drift__events_silver_loads')
) }}
