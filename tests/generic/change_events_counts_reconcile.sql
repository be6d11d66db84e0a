{#- Every run's events reconcile: events in = applied + duplicates + quarantined +
    skipped. -#}
{% test change_events_counts_reconcile(model) %}
    select *
    from {{ model }}
    where events_in != applied + duplicates + quarantined + skipped
{% endtest %}
