{#- A key's versions chain up: each one ends where the next begins, the last one at the high
    end date. -#}
{% test change_events_versions_chain(model, key_columns) %}
    {%- set high = var('default_high_dttm', '9999-12-31 23:59:59') %}
    with chained as (
        select
            *,
            lead(valid_from) over (
                partition by {{ key_columns | join(', ') }}
                order by valid_from, valid_to
            ) as next_valid_from
        from {{ model }}
    )

    select *
    from chained
    where
        valid_to < valid_from
        or valid_to != coalesce(next_valid_from, to_timestamp('{{ high }}'))
        or is_current != (next_valid_from is null)
{% endtest %}
