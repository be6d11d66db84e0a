{#-
    Operational metadata of snapshots: names, values and types shared by the snapshot overrides.

    Column names default to the ones below and can be renamed with the project var
    `snapshot_metadata_column_names` (a mapping with any of the keys below).
-#}

{% macro snapshot_metadata_column_names() %}
    {%- set names = {
        'insert_process_id': 'dbt_insert_process_id',
        'inserted_at': 'dbt_inserted_at',
        'close_process_id': 'dbt_close_process_id',
        'closed_at': 'dbt_closed_at',
        'valid_to_high': 'dbt_valid_to_high'
    } -%}
    {%- do names.update(var('snapshot_metadata_column_names', {})) -%}
    {{ return(names) }}
{% endmacro %}


{#- The process id of this dbt invocation, as a SQL string literal. -#}
{% macro snapshot_process_id() %}
    {{ return("'" ~ invocation_id ~ "'") }}
{% endmacro %}


{#- The high end date of open rows, zone-less, cast to the type of dbt_valid_from.
    A zone-less literal keeps its wall-clock value whatever the session time zone; the project
    runs its sessions in UTC. -#}
{% macro snapshot_high_end_value(data_type) %}
    {%- set high = var('default_high_dttm', '9999-12-31 23:59:59') -%}
    {%- if high is string and (high.endswith('Z') or '+' in high[10:]) -%}
        {{ exceptions.raise_compiler_error(
            "var default_high_dttm must be a zone-less value such as '9999-12-31 23:59:59', got " ~ high
        ) }}
    {%- endif -%}
    {{ return("cast('" ~ high ~ "' as " ~ (data_type or 'timestamp') ~ ")") }}
{% endmacro %}


{#- The Spark type of a snapshot's updated_at expression over its query (no data read). -#}
{% macro snapshot_updated_at_type(strategy, sql) %}
    {%- set described = run_query(
        'describe query select ' ~ strategy.updated_at ~ ' as snapshot_updated_at from (' ~ sql ~ ') as sbq'
    ) -%}
    {{ return(described.rows[0][1] if described and described.rows else 'timestamp') }}
{% endmacro %}


{#- The data type of one column of a relation, matched by name case-insensitively. -#}
{% macro snapshot_column_type(relation_columns, column_name) %}
    {%- for column in relation_columns -%}
        {%- if column.name | lower == column_name | lower -%}
            {{ return(column.dtype) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}


{#- SQL condition: a snapshot row (alias `relation_alias`) is the open version of its key. -#}
{% macro snapshot_row_is_open(relation_alias, columns) %}
    {%- set valid_to = (relation_alias ~ '.' if relation_alias else '') ~ columns.dbt_valid_to -%}
    {%- if config.get('dbt_valid_to_current') -%}
        {{ return('(' ~ valid_to ~ ' = ' ~ config.get('dbt_valid_to_current') ~ ' or ' ~ valid_to ~ ' is null)') }}
    {%- else -%}
        {{ return(valid_to ~ ' is null') }}
    {%- endif -%}
{% endmacro %}


{#- Fail before any write when the snapshot query returns a key more than once: the MERGE would
    insert duplicate versions with the same dbt_scd_id. Names up to 10 offending keys. -#}
{% macro snapshot_assert_unique_keys(strategy, sql) %}
    {%- if not config.get('snapshot_check_unique_keys', true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set keys = snapshot_key_list(strategy.unique_key) -%}
    {%- set check_sql -%}
        select {% for key in keys %}{{ key }} as key_{{ loop.index }}, {% endfor %}count(*) as row_count
        from ({{ sql }}) as snapshot_query
        group by {% for key in keys %}{{ loop.index }}{{ ', ' if not loop.last }}{% endfor %}
        having count(*) > 1
        limit 10
    {%- endset -%}
    {%- set duplicates = run_query(check_sql) -%}
    {%- if duplicates and duplicates.rows | length > 0 -%}
        {%- set shown = [] -%}
        {%- for row in duplicates.rows -%}
            {%- set values = [] -%}
            {%- for index in range(keys | length) -%}
                {%- do values.append(keys[index] ~ '=' ~ row[index]) -%}
            {%- endfor -%}
            {%- do shown.append('(' ~ values | join(', ') ~ ') x' ~ row[keys | length]) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            'Snapshot ' ~ model.name ~ ': the source returns duplicate unique_key values, so the merge '
            ~ 'would be ambiguous. Deduplicate the source. Duplicate keys (first 10): '
            ~ shown | join('; ')
        ) }}
    {%- endif -%}
{% endmacro %}
