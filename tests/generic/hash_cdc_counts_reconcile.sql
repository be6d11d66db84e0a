{#- A hash-CDC run summary's counts reconcile on every row: rows in = applied + quarantined,
    and applied = I + U + N + delete rows (a delta extract's rows whose operation is a delete;
    a held key is quarantined, never applied). -#}
{% test hash_cdc_counts_reconcile(model) %}
    select *
    from {{ model }}
    where
        rows_in != valid_rows + quarantined_rows
        or valid_rows != inserted + updated + unchanged + delete_rows
{% endtest %}
