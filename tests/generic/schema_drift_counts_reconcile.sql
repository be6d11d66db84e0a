{#- Every event of every load is in exactly one place: events in = parsed + quarantined + pending. -#}
{% test schema_drift_counts_reconcile(model) %}
    select *
    from {{ model }}
    where events_in != parsed + quarantined + pending
{% endtest %}
