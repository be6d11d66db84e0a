{#- The SQL models of a hash-CDC dataset: net changes per date, quarantine, run summary. Each
    takes the dataset's models as relations; the run's date comes from the dataset's settings
    (see hash_cdc_setting). -#}

{#- The run's net changes (I, U, D, X): the current rows whose eff_start_date is the run's date.
    Same columns as the current table. -#}
{% macro hash_cdc_history(current) %}
select *  -- noqa: AM04
from {{ current }}
where
    eff_start_date = {{ spark_cdc.hash_cdc_run_date() }}
    and operation != 'N'
{% endmacro %}


{#- Rows of the extract that were not applied, with the raw record and the reasons. -#}
{% macro hash_cdc_quarantine(staged) %}
select
    raw_record,
    quarantine_reason,
    key_hash,
    eff_date
from {{ staged }}
where quarantine_reason is not null
{% endmacro %}


{#- One row per effective date: rows in, applied, quarantined, the operations they made, and
    the figures of the mass-delete guard. -#}
{% macro hash_cdc_run_summary(staged, current) %}
{%- set run_date = spark_cdc.hash_cdc_run_date() %}
{#- A delta extract's operation column (if declared): its delete rows are valid rows too. -#}
{%- set settings = (config.get('meta') or {}).get('hash_cdc') or {} %}
{%- set operation_column = settings.get('operation_column') if settings is mapping else none %}
{%- set quoted = [] %}
{%- for value in (settings.get('delete_values') or ['D']) if settings is mapping %}
    {%- do quoted.append("'" ~ (value | string | trim | replace("'", "''")) ~ "'") %}
{%- endfor %}
{%- set delete_values = quoted | join(', ') %}
with staged as (
    select
        count(*) as rows_in,
        count_if(quarantine_reason is null) as valid_rows,
        count_if(quarantine_reason is not null) as quarantined_rows,
        count_if(quarantine_reason is not null and key_hash is null) as unidentified_rows,
        {%- if operation_column %}
        count_if(
            quarantine_reason is null
            and coalesce(trim({{ adapter.quote(operation_column) }}) in ({{ delete_values }}), false)
        ) as delete_rows
        {%- else %}
        cast(0 as bigint) as delete_rows
        {%- endif %}
    from {{ staged }}
),

supplied_keys as (
    -- A key is held when the extract supplied it in quarantined rows only.
    select
        key_hash,
        bool_and(quarantine_reason is not null) as is_held
    from {{ staged }}
    where key_hash is not null
    group by key_hash
),

current_rows as (
    select
        current_state.operation,
        current_state.eff_start_date,
        coalesce(supplied_keys.is_held, false) as is_held,
        supplied_keys.key_hash is null as is_missing
    from {{ current }} as current_state
    left join supplied_keys on current_state.key_hash = supplied_keys.key_hash
),

operations as (
    select
        count_if(operation = 'I' and eff_start_date = {{ run_date }}) as inserted,
        count_if(operation = 'U' and eff_start_date = {{ run_date }}) as updated,
        count_if(operation = 'D' and eff_start_date = {{ run_date }}) as deleted,
        count_if(operation = 'X' and eff_start_date = {{ run_date }}) as not_supplied,
        count_if(operation = 'N' and not is_held and not is_missing) as unchanged,
        count_if(is_held) as held_keys,
        -- Live keys a full extract lacked but did not delete (it had rows without a readable key).
        {%- if spark_cdc.hash_cdc_setting('extract_mode') == 'full' %}
        count_if(is_missing and operation in ('I', 'U', 'N')) as deletes_deferred,
        {%- else %}
        -- A delta extract deletes no key it lacks: nothing is deferred.
        cast(0 as bigint) as deletes_deferred,
        {%- endif %}
        count_if(
            (operation != 'D' and not (operation = 'I' and eff_start_date = {{ run_date }}))
            or (operation = 'D' and eff_start_date = {{ run_date }})
        ) as live_keys_before
    from current_rows
)

select
    staged.rows_in,
    staged.valid_rows,
    staged.quarantined_rows,
    staged.unidentified_rows,
    staged.delete_rows,
    operations.inserted,
    operations.updated,
    operations.deleted,
    operations.not_supplied,
    operations.unchanged,
    operations.held_keys,
    operations.deletes_deferred,
    operations.live_keys_before,
    case
        when operations.live_keys_before > 0
            then round(operations.deleted / operations.live_keys_before, 4)
        else 0
    end as delete_fraction,
    {{ 'true' if spark_cdc.hash_cdc_flag('allow_mass_delete') else 'false' }} as mass_delete_allowed,
    {{ run_date }} as eff_date
from staged
cross join operations
{% endmacro %}
