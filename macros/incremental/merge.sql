{#-
  dbt-spark's MERGE of the incremental 'merge' strategy, with two optional model configs:

  - merge_update_condition: a predicate on DBT_INTERNAL_SOURCE / DBT_INTERNAL_DEST; matched rows
    are only updated when it holds (e.g. a content hash differs), so unchanged rows keep their
    operational columns;
  - merge_delete_column: a boolean column of the source; a matched row whose flag is true is
    deleted, an unmatched flagged row is not inserted. The column is not part of the target.

  Without them the statement is dbt-spark's: update every matched row, insert the others.
-#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
    {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
    {%- set dest_columns = adapter.get_columns_in_relation(target) -%}
    {%- set delete_column = config.get('merge_delete_column') -%}
    {%- set update_condition = config.get('merge_update_condition') -%}
    {%- set update_columns = get_merge_update_columns(
        config.get('merge_update_columns'), config.get('merge_exclude_columns'), dest_columns
    ) -%}
    {%- set keys = [unique_key] if unique_key is string else (unique_key or []) -%}
    {%- for key in keys -%}
        {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' = DBT_INTERNAL_DEST.' ~ key) -%}
    {%- endfor -%}
    {%- if not keys -%}{%- do predicates.append('FALSE') -%}{%- endif -%}
    {%- set insert_columns = dest_columns | map(attribute='quoted') | list -%}

    {{ sql_header if sql_header is not none }}

    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join(' and ') }}
    {%- if delete_column %}
    when matched and DBT_INTERNAL_SOURCE.{{ delete_column }} then delete
    {%- endif %}
    when matched {%- if update_condition %} and ({{ update_condition }}){% endif %} then update set
    {%- if update_columns %}
        {%- for column_name in update_columns %}
        {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- else %} *
    {%- endif %}
    {%- if delete_column %}
    when not matched and not DBT_INTERNAL_SOURCE.{{ delete_column }} then insert
        ({{ insert_columns | join(', ') }})
        values ({% for column in insert_columns %}DBT_INTERNAL_SOURCE.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
    {%- else %}
    when not matched then insert *
    {%- endif %}
{% endmacro %}
