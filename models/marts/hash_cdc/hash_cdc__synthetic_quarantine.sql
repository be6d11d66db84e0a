{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    pre_hook="{{ hash_cdc_rewind('eff_date') }}",
    partition_by=['eff_date']
) }}

-- depends_on: {{ ref('hash_cdc__synthetic_current') }}
-- Rows of the extract that were not applied, with the raw record and the reasons (written only
-- after the current table accepted the run: a refused run writes nothing).
select
    raw_record,
    quarantine_reason,
    key_hash,
    eff_date
from {{ ref('stg_hash_cdc__synthetic') }}
where quarantine_reason is not null
