{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key='process_id',
    on_schema_change='append_new_columns'
) }}

-- One row per dbt run that took in events of accounts: what came in, what happened to it.
{{ spark_cdc.change_events_run_summary(
    ref('int_change_events__accounts_ledger'),
    ref('change_events__accounts_history')
) }}
