{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    pre_hook="{{ spark_cdc.hash_cdc_rewind('eff_start_date') }}",
    partition_by=['eff_start_date'],
    tblproperties={'delta.dataSkippingStatsColumns': 'operation'},
    on_schema_change='append_new_columns'
) }}

-- The net changes (I, U, D, X) of synthetic on the run's effective date: re-running a date
-- overwrites its partition.
{{ spark_cdc.hash_cdc_history(ref('hash_cdc__synthetic_current')) }}
