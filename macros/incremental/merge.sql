{#-
  dbt-spark's MERGE of the incremental 'merge' strategy, with two optional model configs:

  - merge_update_condition: a predicate on DBT_INTERNAL_SOURCE / DBT_INTERNAL_DEST; matched rows
    are only updated when it holds (e.g. a content hash differs), so unchanged rows keep their
    operational columns;
  - merge_delete_column: a boolean column of the source; a matched row whose flag is true is
    deleted, an unmatched flagged row is not inserted; a NULL flag counts as false (the row is
    updated or inserted). The column is not part of the target.

  - merge_target_floor: a column of the target; the model sets the session setting
    spark_cdc.merge.target_floor (merge_floor.SETTING) to a value that every target row it
    changes has reached in that column, and the MERGE only looks at target rows at or above it
    (Delta skips the files below: a history's closed versions that ended before the run's
    horizon);
  - merge_replace_from: a column (e.g. a batch id); the model's rows replace the target's rows
    whose value is at or above the lowest value among the model's rows (INSERT ... REPLACE WHERE,
    one Delta commit), so that writing the same increment again leaves it written once. The
    other configs do not apply then; an empty increment writes nothing.

  Without them the statement is dbt-spark's: update every matched row, insert the others, with
  the target's columns that the source has listed by name (dbt-spark: `set *` / `insert *`).
-#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
    {%- set replace_from = config.get('merge_replace_from') -%}
    {%- if replace_from -%}
        {{ return(spark_cdc.replace_from_sql(target, source, replace_from)) }}
    {%- endif -%}
    {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
    {%- set dest_columns = adapter.get_columns_in_relation(target) -%}
    {%- set delete_column = config.get('merge_delete_column') -%}
    {%- set update_condition = config.get('merge_update_condition') -%}
    {%- set update_columns = get_merge_update_columns(
        config.get('merge_update_columns'), config.get('merge_exclude_columns'), dest_columns
    ) -%}
    {#- A blank unique_key (or a list of blanks) is no key, as in dbt-spark: every row inserted. -#}
    {%- set keys = ([unique_key] if unique_key is string else (unique_key or []))
        | map('trim') | reject('equalto', '') | list -%}
    {%- for key in keys -%}
        {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' = DBT_INTERNAL_DEST.' ~ key) -%}
    {%- endfor -%}
    {%- if not keys -%}{%- do predicates.append('FALSE') -%}{%- endif -%}
    {%- set floor_column = config.get('merge_target_floor') -%}
    {%- set floor = spark_cdc.session_setting('spark_cdc.merge.target_floor') if floor_column else none -%}
    {%- if floor is not none -%}
        {%- do predicates.append(
            'DBT_INTERNAL_DEST.' ~ floor_column ~ " >= '" ~ floor | replace("'", "''") ~ "'") -%}
    {%- endif -%}
    {#- The target's columns the source has: a column the model stops selecting (kept by
        on_schema_change) keeps its value on updated rows and is NULL on new ones, where
        dbt-spark's `update set *` / `insert *` fail on it. -#}
    {%- set source_names = adapter.get_columns_in_relation(source)
        | map(attribute='name') | map('lower') | list -%}
    {%- set insert_columns = [] -%}
    {%- for column in dest_columns if column.name | lower in source_names -%}
        {%- do insert_columns.append(column.quoted) -%}
    {%- endfor -%}
    {%- set update_columns = update_columns or insert_columns -%}

    {{ sql_header if sql_header is not none }}

    {#- A SQL model's source is its view, computed anew by each run of the statement: the
        sparkcdc adapter runs it again when Delta ends it for a concurrent commit. -#}
    {{ '/* spark_cdc: retry on a write conflict */' if model.language == 'sql' }}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join(' and ') }}
    {%- if delete_column %}
    when matched and coalesce(DBT_INTERNAL_SOURCE.{{ delete_column }}, false) then delete
    {%- endif %}
    when matched {%- if update_condition %} and ({{ update_condition }}){% endif %} then update set
    {%- for column_name in update_columns %}
        {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ ',' if not loop.last }}
    {%- endfor %}
    when not matched {%- if delete_column %} and not coalesce(DBT_INTERNAL_SOURCE.{{ delete_column }}, false){% endif %} then insert
        ({{ insert_columns | join(', ') }})
        values ({% for column in insert_columns %}DBT_INTERNAL_SOURCE.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}


{#- The rows of `source` replace those of `target` whose `column` is at or above the lowest
    value in `source` (a statement that writes nothing when `source` is empty). -#}
{% macro replace_from_sql(target, source, column) %}
    {%- set lowest = spark_cdc.lowest_value(source, column) -%}
    {%- if lowest is none -%}
        {{ return('select 1 as nothing_to_write') }}
    {%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | list -%}
    {%- set sql -%}
    insert into {{ target }}
    replace where {{ column }} >= {{ lowest }}
    select {{ columns | join(', ') }} from {{ source }}
    {%- endset -%}
    {{ return(sql) }}
{% endmacro %}


{#- The lowest value of `column` in `relation`, as a SQL literal (none when it is empty). -#}
{% macro lowest_value(relation, column) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set found = run_query('select cast(min(' ~ column ~ ') as string) from ' ~ relation) -%}
    {%- set value = found.columns[0].values()[0] -%}
    {{ return(none if value is none else "'" ~ value ~ "'") }}
{% endmacro %}


{#- The value of a session setting (none when it is not set, or when not executing). -#}
{% macro session_setting(key) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set value = run_query('set ' ~ key).columns[1].values()[0] -%}
    {{ return(none if value in (none, '', '<undefined>') else value) }}
{% endmacro %}
