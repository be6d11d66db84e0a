{#- Helpers shared by the snapshot macros and the snapshot generic tests. -#}

{#- The unique_key argument as a list of column names. -#}
{% macro snapshot_key_list(unique_key) %}
    {{ return(unique_key if unique_key is sequence and unique_key is not string else [unique_key]) }}
{% endmacro %}


{#- SQL condition: the row is the open version (valid_to null, or equal to valid_to_current). -#}
{% macro snapshot_test_is_open(valid_to, valid_to_current) %}
    {%- if valid_to_current -%}
        {{ return('(' ~ valid_to ~ ' is null or ' ~ valid_to ~ ' = ' ~ valid_to_current ~ ')') }}
    {%- else -%}
        {{ return(valid_to ~ ' is null') }}
    {%- endif -%}
{% endmacro %}


{#- The first run's dbt_scd_id expression with the key check folded in: a key that is NULL or
    that the query returns more than once makes the expression raise an error naming that key and
    its row count, so the statement that creates the snapshot table fails and creates nothing.
    A window over the keys in the same select: the check costs no pass of its own over the query.
    Config snapshot_check_unique_keys: false leaves dbt's plain expression. -#}
{% macro snapshot_checked_scd_id(strategy) %}
    {%- if not config.get('snapshot_check_unique_keys', true) -%}
        {{ return(strategy.scd_id) }}
    {%- endif -%}
    {%- set keys = spark_cdc.snapshot_key_list(strategy.unique_key) -%}
    {%- set key_rows = 'count(*) over (partition by ' ~ keys | join(', ') ~ ')' -%}
    {%- set check = spark_cdc.snapshot_key_check(keys, keys, key_rows) -%}
    {{ return('case when ' ~ check.fails ~ ' then ' ~ check.error ~ ' else ' ~ strategy.scd_id ~ ' end') }}
{% endmacro %}


{#- The key check of a source row, as SQL: `fails` (a condition: the row's key is NULL, or its
    `key_rows`, the number of the query's rows with that key, is above 1) and `error` (a
    raise_error naming the key and its row count). `names`: the unique_key columns as the user
    wrote them; `values`: the expressions that hold them where the check runs. -#}
{% macro snapshot_key_check(names, values, key_rows) %}
    {%- set null_tests = [] -%}
    {%- set shown = [] -%}
    {%- for value in values -%}
        {%- do null_tests.append(value ~ ' is null') -%}
        {%- set text = "coalesce(cast(" ~ value ~ " as string), 'NULL')" -%}
        {%- do shown.append(spark_cdc.snapshot_sql_text(names[loop.index0] ~ '=') ~ ', ' ~ text) -%}
    {%- endfor -%}
    {%- set any_null = '(' ~ null_tests | join(' or ') ~ ')' -%}
    {%- set message -%}
        concat(
            {{ spark_cdc.snapshot_sql_text('Snapshot ' ~ model.name ~ ': the source returns ') }},
            case when {{ any_null }} then 'NULL or duplicate' else 'duplicate' end,
            {{ spark_cdc.snapshot_sql_text(' unique_key values, so the merge would be ambiguous; '
                ~ 'nothing was written. Fix the source. Offending key (one of them): (') }},
            {{ shown | join(", ', ', ") }},
            ') x',
            cast({{ key_rows }} as string)
        )
    {%- endset -%}
    {%- set fails = '(' ~ key_rows ~ ' > 1 or ' ~ any_null ~ ')' -%}
    {{ return({'fails': fails, 'error': 'raise_error(' ~ message ~ ')'}) }}
{% endmacro %}


{#- `text` as a Spark SQL string literal (backslashes and single quotes escaped). -#}
{% macro snapshot_sql_text(text) %}
    {{ return("'" ~ (text | string | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'") }}
{% endmacro %}
