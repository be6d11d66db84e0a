{#-
    First run of a snapshot: the select that creates the snapshot table.

    Same columns as dbt's default__build_snapshot_table (dbt-adapters 1.24.5), plus:
    - [spark_cdc] the operational metadata columns (snapshot_metadata_column_names);
    - [spark_cdc] a NULL or duplicate key fails the statement that creates the table, so no
      table is made: the check is folded into the same pass over the query that writes it
      (snapshot_checked_scd_id), not run as a query of its own;
    - [spark_cdc] the table maintenance settings are checked (snapshot_maintenance.sql).
-#}
{% macro spark__build_snapshot_table(strategy, sql) %}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {%- set meta = spark_cdc.snapshot_metadata_column_names() -%}
    {%- set valid_from_type = spark_cdc.snapshot_assert_updated_at_type(strategy, sql) -%}
    {#- later runs maintain the table: a bad maintenance setting stops the first run already -#}
    {%- do spark_cdc.snapshot_maintenance_settings() -%}

    select
        *,
        {{ spark_cdc.snapshot_checked_scd_id(strategy) }} as {{ columns.dbt_scd_id }},
        {{ strategy.updated_at }} as {{ columns.dbt_updated_at }},
        {{ strategy.updated_at }} as {{ columns.dbt_valid_from }},
        {{ get_dbt_valid_to_current(strategy, columns) }},
        {%- if strategy.hard_deletes == 'new_record' %}
        {{ spark_cdc.snapshot_deleted_flag(false) }} as {{ columns.dbt_is_deleted }},
        {%- endif %}
        {{ spark_cdc.snapshot_process_id() }} as {{ meta.insert_process_id }},
        {{ snapshot_get_time() }} as {{ meta.inserted_at }},
        cast(null as string) as {{ meta.close_process_id }},
        cast(null as timestamp) as {{ meta.closed_at }},
        {{ spark_cdc.snapshot_high_end_value(valid_from_type) }} as {{ meta.valid_to_high }}
    from (
        {{ sql }}
    ) as sbq
{% endmacro %}
