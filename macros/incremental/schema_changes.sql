{#-
  dbt's check of an incremental model's schema changes (on_schema_change), without the model's
  merge_delete_column: that flag tells the MERGE which rows to delete
  (macros/incremental/merge.sql) and is never a column of the target, so append_new_columns does
  not add it and sync_all_columns does not count it. Other models: dbt's own check.
-#}
{% macro spark__check_for_schema_changes(source_relation, target_relation) %}
    {%- set changes = dbt.default__check_for_schema_changes(source_relation, target_relation) -%}
    {%- set flag = config.get('merge_delete_column') -%}
    {%- if not flag -%}
        {{ return(changes) }}
    {%- endif -%}
    {%- set added = [] -%}
    {%- for column in changes['source_not_in_target'] if column.name | lower != flag | lower -%}
        {%- do added.append(column) -%}
    {%- endfor -%}
    {%- set source_columns = [] -%}
    {%- for column in changes['source_columns'] if column.name | lower != flag | lower -%}
        {%- do source_columns.append(column) -%}
    {%- endfor -%}
    {%- do changes.update({
        'source_not_in_target': added,
        'source_columns': source_columns,
        'schema_changed': added != [] or changes['target_not_in_source'] != []
            or changes['new_target_types'] != [],
    }) -%}
    {{ return(changes) }}
{% endmacro %}
