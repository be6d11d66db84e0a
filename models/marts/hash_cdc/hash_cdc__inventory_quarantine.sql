{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    pre_hook="{{ spark_cdc.hash_cdc_rewind('eff_date') }}",
    partition_by=['eff_date']
) }}

-- depends_on: {{ ref('hash_cdc__inventory_current') }}
-- Rows of inventory's extract that were not applied (written only after the current table
-- accepted the run: a refused run writes nothing).
{{ spark_cdc.hash_cdc_quarantine(ref('stg_hash_cdc__inventory')) }}
