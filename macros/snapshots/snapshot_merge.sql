{#-
    MERGE of the staging rows into the snapshot table.

    As dbt-spark 1.11.0's spark__snapshot_merge_sql (the Iceberg `source.identifier` branch kept),
    except:
    - [spark_cdc] closing a row also records the closing process id and processing time, and sets
      the high end date column to the new dbt_valid_to;
    - [spark_cdc] inserts name their columns (insert_cols, quoted) instead of `insert *`, so the
      staging relation's column order does not matter and helper columns can never leak in.
-#}
{% macro spark__snapshot_merge_sql(target, source, insert_cols) -%}
    {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}
    {%- set meta = spark_cdc.snapshot_metadata_column_names() -%}

    merge into {{ target }} as DBT_INTERNAL_DEST
    {%- if target.is_iceberg %}
    {#- create view only supports a name (no catalog, or schema) #}
    using {{ source.identifier }} as DBT_INTERNAL_SOURCE
    {%- else %}
    using {{ source }} as DBT_INTERNAL_SOURCE
    {%- endif %}
    on DBT_INTERNAL_SOURCE.{{ columns.dbt_scd_id }} = DBT_INTERNAL_DEST.{{ columns.dbt_scd_id }}
    when matched
        and {{ spark_cdc.snapshot_row_is_open('DBT_INTERNAL_DEST', columns) }}
        and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update set
            {{ columns.dbt_valid_to }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }},
            {{ meta.close_process_id }} = DBT_INTERNAL_SOURCE.{{ meta.close_process_id }},
            {{ meta.closed_at }} = DBT_INTERNAL_SOURCE.{{ meta.closed_at }},
            {{ meta.valid_to_high }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }}
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert ({{ insert_cols | join(', ') }})
        values (
            {%- for column in insert_cols %}
            DBT_INTERNAL_SOURCE.{{ column }}{{ ',' if not loop.last }}
            {%- endfor %}
        )
{%- endmacro %}
