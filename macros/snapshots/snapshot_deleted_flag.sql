{#- dbt_is_deleted as dbt writes it: the strings 'True' and 'False' (dbt-adapters'
    default__snapshot_staging_table and build_snapshot_table), so dbt's own tests pass and a
    table built by stock dbt continues under this package, and back, without a type change. A
    table whose dbt_is_deleted is a boolean (built by an earlier spark_cdc, see docs/snapshots.md)
    keeps its type: its rows are written as booleans. Read either way (snapshot_is_deleted_test). -#}

{#- The SQL literal of the flag `deleted` for the snapshot table's columns (the table being
    built: none, dbt's strings). -#}
{% macro snapshot_deleted_flag(deleted, target_columns=none) -%}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {%- set stored = spark_cdc.snapshot_column_type(target_columns or [], columns.dbt_is_deleted) -%}
    {%- if stored is not none and stored | lower == 'boolean' -%}
        {{ return('true' if deleted else 'false') }}
    {%- endif -%}
    {{ return("'True'" if deleted else "'False'") }}
{%- endmacro %}


{#- SQL condition: the flag `column_sql` says deleted, whether it is dbt's string or a boolean
    (a NULL flag is not deleted). -#}
{% macro snapshot_is_deleted_test(column_sql) -%}
    coalesce(lower(cast({{ column_sql }} as string)) = 'true', false)
{%- endmacro %}
