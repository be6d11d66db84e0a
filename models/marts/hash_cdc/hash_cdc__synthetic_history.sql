{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    pre_hook="{{ hash_cdc_rewind('eff_start_date') }}",
    partition_by=['eff_start_date'],
    tblproperties={'delta.dataSkippingStatsColumns': 'operation'},
    on_schema_change='append_new_columns'
) }}

-- The net changes (I, U, D, X) of the run for var('hash_cdc_effective_date'): re-running a date
-- overwrites its partition. Same columns as the current table, whatever the dataset's config.
select *  -- noqa: AM04
from {{ ref('hash_cdc__synthetic_current') }}
where
    eff_start_date = to_date('{{ var("hash_cdc_effective_date") }}')
    and operation != 'N'
