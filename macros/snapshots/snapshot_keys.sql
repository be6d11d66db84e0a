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
