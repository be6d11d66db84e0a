{#- All accepted variations of one schema version of an event type carry the same superset. -#}
{% test schema_drift_one_superset_per_version(model) %}
    select
        event_type,
        schema_version
    from {{ model }}
    where status = 'accepted'
    group by event_type, schema_version
    having count(distinct superset_schema) > 1
{% endtest %}
