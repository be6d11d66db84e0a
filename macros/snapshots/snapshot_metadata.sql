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


{#- The processing time of this run: the engine's clock read once per node, as a zone-less
    timestamp literal (session time zone UTC), so that everything one snapshot run writes (the
    check strategy's dbt_valid_from, dbt_inserted_at, dbt_closed_at, hard deletes) is one instant.
    A literal rather than current_timestamp(), so that the change rows cached for the run are the
    MERGE's source as they are (Delta computes a MERGE source that calls current_timestamp()
    again). Kept on the node's context for the rest of its run. -#}
{% macro snapshot_processing_time() %}
    {%- if not execute -%}
        {{ return('current_timestamp()') }}
    {%- endif -%}
    {%- set memo = model if model is mapping else {} -%}
    {%- if '_spark_cdc_processing_time' not in memo -%}
        {%- set clock = run_query("select date_format(current_timestamp(), 'yyyy-MM-dd HH:mm:ss.SSSSSS')") -%}
        {%- do memo.update({'_spark_cdc_processing_time': "timestamp'" ~ clock.rows[0][0] ~ "'"}) -%}
    {%- endif -%}
    {{ return(memo['_spark_cdc_processing_time']) }}
{% endmacro %}


{#- dbt's snapshot_get_time (the check strategy's updated_at, a first build's times): the run's
    processing time above, instead of dbt-spark's current_timestamp() evaluated whenever the
    MERGE computes its source. -#}
{% macro spark__snapshot_get_time() %}
    {{ return(spark_cdc.snapshot_processing_time()) }}
{% endmacro %}


{#- The process id of this dbt invocation, as a SQL string literal. -#}
{% macro snapshot_process_id() %}
    {{ return("'" ~ invocation_id ~ "'") }}
{% endmacro %}


{#- The high end date of open rows (var default_high_dttm) as validated text 'YYYY-MM-DD[ HH:MM:SS[.ffffff]]':
    zone-less, a real calendar date and time, at most 9999-12-31 23:59:59.999999. A YAML date or
    datetime (an unquoted --vars value) is accepted as its text. Anything else stops the run with
    an error naming the value, before anything is written (see validate_snapshot_vars). -#}
{% macro snapshot_high_end_text() %}
    {%- set raw = var('default_high_dttm', '9999-12-31 23:59:59') -%}
    {%- set high = (raw | string).strip() -%}
    {%- set hint = "var default_high_dttm must be a zone-less timestamp 'YYYY-MM-DD HH:MM:SS' "
        ~ "(a real date, at most '9999-12-31 23:59:59'), such as '9999-12-31 23:59:59'; got '" ~ high ~ "'" -%}
    {%- set match = modules.re.fullmatch(
        '([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.][0-9]{1,6})?)?', high
    ) -%}
    {%- if match is none -%}
        {{ exceptions.raise_compiler_error(hint) }}
    {%- endif -%}
    {%- set year, month, day = match.group(1) | int, match.group(2) | int, match.group(3) | int -%}
    {%- set leap = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 -%}
    {%- set month_days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] -%}
    {%- if year < 1 or month < 1 or month > 12 or day < 1 or day > month_days[month - 1] -%}
        {{ exceptions.raise_compiler_error(hint ~ ' (no such date)') }}
    {%- endif -%}
    {%- if match.group(4) is not none and (match.group(4) | int > 23 or match.group(5) | int > 59
        or match.group(6) | int > 59) -%}
        {{ exceptions.raise_compiler_error(hint ~ ' (no such time)') }}
    {%- endif -%}
    {{ return(high | replace('T', ' ')) }}
{% endmacro %}


{#- on-run-start: check the vars the snapshot overrides read, so that a bad value stops the run
    before any node writes (it renders nothing). -#}
{% macro validate_snapshot_vars() %}
    {%- do spark_cdc.snapshot_high_end_text() -%}
    {{ return('') }}
{% endmacro %}


{#- The high end date of open rows, zone-less, cast to the type of dbt_valid_from.
    A zone-less literal keeps its wall-clock value whatever the session time zone; the project
    runs its sessions in UTC. -#}
{% macro snapshot_high_end_value(data_type) %}
    {{ return("cast('" ~ spark_cdc.snapshot_high_end_text() ~ "' as " ~ (data_type or 'timestamp') ~ ")") }}
{% endmacro %}


{#- The Spark type of a snapshot's updated_at expression over its query (no data read). -#}
{% macro snapshot_updated_at_type(strategy, sql) %}
    {%- set described = run_query(
        'describe query select ' ~ strategy.updated_at ~ ' as snapshot_updated_at from (' ~ sql ~ ') as sbq'
    ) -%}
    {{ return(described.rows[0][1] if described and described.rows else 'timestamp') }}
{% endmacro %}


{#- With the timestamp strategy, updated_at must be a date or timestamp: a text column would be
    compared as text and cast (or fail) value by value. Returns its type; a clear error before
    anything is written otherwise. -#}
{% macro snapshot_assert_updated_at_type(strategy, sql) %}
    {%- set data_type = spark_cdc.snapshot_updated_at_type(strategy, sql) -%}
    {%- if config.get('strategy') == 'timestamp'
        and (data_type | lower) not in ('timestamp', 'timestamp_ntz', 'date') -%}
        {{ exceptions.raise_compiler_error(
            'Snapshot ' ~ model.name ~ ': updated_at (' ~ strategy.updated_at ~ ') is of type '
            ~ data_type ~ '; the timestamp strategy needs a date or timestamp. Cast it in the '
            ~ 'snapshot query (a value that does not cast is a source problem to fix there); '
            ~ 'nothing was written.'
        ) }}
    {%- endif -%}
    {{ return(data_type) }}
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


{#- Fail before any write when the snapshot query returns a key more than once (the MERGE would
    insert duplicate versions with the same dbt_scd_id) or a NULL in a key column (a NULL key
    never matches its open row: every run would insert it again). Names up to 10 offending keys.
    Config snapshot_check_unique_keys: false skips the check. -#}
{% macro snapshot_assert_unique_keys(strategy, sql) %}
    {%- if not config.get('snapshot_check_unique_keys', true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set keys = spark_cdc.snapshot_key_list(strategy.unique_key) -%}
    {%- set check_sql -%}
        select {% for key in keys %}{{ key }} as key_{{ loop.index }}, {% endfor %}count(*) as row_count
        from ({{ sql }}) as snapshot_query
        group by {% for key in keys %}{{ loop.index }}{{ ', ' if not loop.last }}{% endfor %}
        having count(*) > 1{% for key in keys %} or key_{{ loop.index }} is null{% endfor %}
        limit 10
    {%- endset -%}
    {%- set offending = run_query(check_sql) -%}
    {%- if offending and offending.rows | length > 0 -%}
        {%- set shown = [] -%}
        {%- set null_rows = [] -%}
        {%- for row in offending.rows -%}
            {%- set values = [] -%}
            {%- for index in range(keys | length) -%}
                {%- do values.append(keys[index] ~ '=' ~ ('NULL' if row[index] is none else row[index])) -%}
                {%- if row[index] is none and row not in null_rows -%}{%- do null_rows.append(row) -%}{%- endif -%}
            {%- endfor -%}
            {%- do shown.append('(' ~ values | join(', ') ~ ') x' ~ row[keys | length]) -%}
        {%- endfor -%}
        {%- set problem = 'NULL or duplicate unique_key values' if null_rows else 'duplicate unique_key values' -%}
        {{ exceptions.raise_compiler_error(
            'Snapshot ' ~ model.name ~ ': the source returns ' ~ problem ~ ', so the merge '
            ~ 'would be ambiguous; nothing was written. Fix the source. Offending keys (first 10): '
            ~ shown | join('; ')
        ) }}
    {%- endif -%}
{% endmacro %}


{#- Whether this run must refuse an empty snapshot query: with hard deletes (hard_deletes:
    invalidate or new_record, or the legacy invalidate_hard_deletes) every open row would be
    closed, and an empty source is far more often an upstream failure than a real mass delete.
    The config snapshot_allow_empty_source: true (per snapshot) or the var of the same name (per
    run) lets such a run through. -#}
{% macro snapshot_refuses_empty_source(strategy) %}
    {%- set allowed = config.get('snapshot_allow_empty_source', false)
        or var('snapshot_allow_empty_source', false) -%}
    {%- set hard_deletes = strategy.hard_deletes in ('invalidate', 'new_record') -%}
    {{ return(hard_deletes and (allowed | string | lower) != 'true') }}
{% endmacro %}


{% macro snapshot_raise_empty_source(strategy) %}
    {{ exceptions.raise_compiler_error(
        'Snapshot ' ~ model.name ~ ': the snapshot query returned no rows; with hard_deletes: '
        ~ strategy.hard_deletes ~ ' this run would close every open row. Refused, nothing was '
        ~ 'written: an empty source is usually an upstream failure. If the source is really '
        ~ "empty, re-run with --vars '{snapshot_allow_empty_source: true}'."
    ) }}
{% endmacro %}


{#- The guard rails on the snapshot query, in one pass over it, before anything is written:
    duplicate or NULL keys (snapshot_assert_unique_keys names them) and, when check_not_empty,
    an empty query that snapshot_refuses_empty_source. A Delta snapshot that caches its changes
    checks its keys in the join that finds the changed keys instead (snapshot_find_changed_keys);
    this pass serves the other paths. -#}
{% macro snapshot_assert_source(strategy, sql, check_not_empty=false) %}
    {%- set check_keys = config.get('snapshot_check_unique_keys', true) -%}
    {%- set check_empty = check_not_empty and spark_cdc.snapshot_refuses_empty_source(strategy) -%}
    {%- if not check_keys and not check_empty -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if check_keys -%}
        {%- set keys = spark_cdc.snapshot_key_list(strategy.unique_key) -%}
        {%- set check_sql -%}
            select
                coalesce(sum(key_rows), 0) as source_rows,
                count_if(key_rows > 1{% for key in keys %} or key_{{ loop.index }} is null{% endfor %}) as offending_keys
            from (
                select {% for key in keys %}{{ key }} as key_{{ loop.index }}, {% endfor %}count(*) as key_rows
                from ({{ sql }}) as snapshot_query
                group by {% for key in keys %}{{ loop.index }}{{ ', ' if not loop.last }}{% endfor %}
            ) as key_counts
        {%- endset -%}
    {%- else -%}
        {%- set check_sql = spark_cdc.snapshot_source_probe_sql(sql) -%}
    {%- endif -%}
    {%- set result = run_query(check_sql) -%}
    {%- if check_empty and result.rows[0][0] == 0 -%}
        {%- do spark_cdc.snapshot_raise_empty_source(strategy) -%}
    {%- endif -%}
    {%- if result.rows[0][1] > 0 -%}
        {%- do spark_cdc.snapshot_assert_unique_keys(strategy, sql) -%}
    {%- endif -%}
{% endmacro %}


{#- A query whose `source_rows` is 1 when the snapshot query returns a row, else 0 (it stops at
    the first row), and `offending_keys` 0 (no key check). -#}
{% macro snapshot_source_probe_sql(sql) -%}
    select count(*) as source_rows, 0 as offending_keys
    from (select 1 from ({{ sql }}) as snapshot_query limit 1) as probe
{%- endmacro %}
