{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    pre_hook="{{ hash_cdc_rewind('eff_date') }}",
    partition_by=['eff_date']
) }}

-- One row per effective date: rows in, applied, quarantined, and the operations they made.
{%- set run_date = "to_date('" ~ var('hash_cdc_effective_date') ~ "')" %}

with staged as (
    select
        count(*) as rows_in,
        count_if(quarantine_reason is null) as valid_rows,
        count_if(quarantine_reason is not null) as quarantined_rows
    from {{ ref('stg_hash_cdc__synthetic') }}
),

operations as (
    select
        count_if(operation = 'I' and eff_start_date = {{ run_date }}) as inserted,
        count_if(operation = 'U' and eff_start_date = {{ run_date }}) as updated,
        count_if(operation = 'D' and eff_start_date = {{ run_date }}) as deleted,
        count_if(operation = 'X' and eff_start_date = {{ run_date }}) as not_supplied,
        count_if(operation = 'N') as unchanged
    from {{ ref('hash_cdc__synthetic_current') }}
)

select
    staged.rows_in,
    staged.valid_rows,
    staged.quarantined_rows,
    operations.inserted,
    operations.updated,
    operations.deleted,
    operations.not_supplied,
    operations.unchanged,
    {{ run_date }} as eff_date
from staged
cross join operations
