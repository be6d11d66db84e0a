{#- The current table holds exactly the current, not deleted versions of the history; a row was
    last updated at the history's `updated_at` column (valid_from; changed_at for a history on
    tracked columns). -#}
{% test change_events_current_matches_history(model, history, key_columns, updated_at='valid_from') %}
    {%- set keys = key_columns %}
    with latest as (
        select *
        from {{ history }}
        where is_current and not is_deleted
    )

    select
        {% for key in keys %}coalesce(current_rows.{{ key }}, latest.{{ key }}) as {{ key }}{{ ', ' if not loop.last }}{% endfor %}
    from {{ model }} as current_rows
    full outer join latest
        on {% for key in keys %}current_rows.{{ key }} = latest.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
    where
        current_rows.{{ keys[0] }} is null
        or latest.{{ keys[0] }} is null
        or current_rows.updated_at != coalesce(latest.{{ updated_at }}, latest.valid_from)
        or not current_rows.created_at <=> latest.created_at
{% endtest %}
