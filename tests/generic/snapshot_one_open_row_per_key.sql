{#- Every key has at most one open version. Returns the keys with more. -#}
{% test snapshot_one_open_row_per_key(model, unique_key, valid_to='dbt_valid_to', valid_to_current=none) %}
    {%- set keys = spark_cdc.snapshot_key_list(unique_key) -%}
    select
        {{ keys | join(', ') }},
        count(*) as open_rows
    from {{ model }}
    where {{ spark_cdc.snapshot_test_is_open(valid_to, valid_to_current) }}
    group by {{ keys | join(', ') }}
    having count(*) > 1
{% endtest %}
