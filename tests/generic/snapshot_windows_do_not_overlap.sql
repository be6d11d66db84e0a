{#- Versions of a key, in valid_from order, never overlap: each ends at or before the next starts.
    An open version counts as ending at the high end. Returns the overlapping pairs. -#}
{% test snapshot_windows_do_not_overlap(
    model, unique_key, valid_from='dbt_valid_from', valid_to='dbt_valid_to', valid_to_current=none
) %}
    {%- set keys = spark_cdc.snapshot_key_list(unique_key) -%}
    with ordered as (
        select
            {{ keys | join(', ') }},
            {{ valid_from }} as window_start,
            case
                when {{ spark_cdc.snapshot_test_is_open(valid_to, valid_to_current) }} then null
                else {{ valid_to }}
            end as window_end,
            lead({{ valid_from }}) over (
                partition by {{ keys | join(', ') }}
                order by {{ valid_from }}, {{ valid_to }} nulls last
            ) as next_start
        from {{ model }}
    )

    select *
    from ordered
    where next_start is not null and (window_end is null or window_end > next_start)
{% endtest %}
