{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    on_schema_change='append_new_columns',
    pre_hook="{{ spark_cdc.hash_cdc_rewind('eff_date') }}",
    partition_by=['eff_date']
) }}

-- One row per effective date of synthetic: rows in, applied, quarantined, operations, guard.
{{ spark_cdc.hash_cdc_run_summary(
    ref('stg_hash_cdc__synthetic'),
    ref('hash_cdc__synthetic_current')
) }}
