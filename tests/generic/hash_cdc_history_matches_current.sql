{#- Every key's latest history row agrees with its current row (same date and hash, and the same
    operation unless the key is unchanged, N), and every history key is current. -#}
{% test hash_cdc_history_matches_current(model, history) %}
    with ranked as (
        select
            *,
            row_number() over (partition by key_hash order by eff_start_date desc) as recency
        from {{ history }}
    ),

    latest as (
        select * from ranked where recency = 1
    )

    select
        coalesce(current_rows.key_hash, latest.key_hash) as key_hash,
        current_rows.operation as current_operation,
        latest.operation as history_operation
    from {{ model }} as current_rows
    full outer join latest
        on current_rows.key_hash = latest.key_hash
    where
        current_rows.key_hash is null
        or latest.key_hash is null
        or current_rows.eff_start_date != latest.eff_start_date
        or current_rows.nonkey_hash != latest.nonkey_hash
        or (current_rows.operation != 'N' and current_rows.operation != latest.operation)
{% endtest %}
