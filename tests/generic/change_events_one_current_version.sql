{#- Every key of a change-event history has exactly one current version. -#}
{% test change_events_one_current_version(model, key_columns) %}
    select
        {{ key_columns | join(', ') }},
        count_if(is_current) as current_versions
    from {{ model }}
    group by {{ key_columns | join(', ') }}
    having count_if(is_current) != 1
{% endtest %}
