{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    merge_replace_from='load_seq',
    pre_hook="{{ spark_cdc.schema_drift_note_registered(ref('schema_drift__events_registry')) }}",
    post_hook=[
        "{{ spark_cdc.schema_drift_record_covered() }}",
        "reset spark_cdc.schema_drift.registered_through"
    ]
) }}

-- Bronze events of events kept out of silver, with why.
{{ spark_cdc.schema_drift_quarantine(
    ref('int_schema_drift__events_bronze'),
    ref('schema_drift__events_registry')
) }}
