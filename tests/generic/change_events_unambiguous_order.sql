{#- A current-only source's ledger (model, scoped or not) holds no two different applied events
    at one position (event_position, event_ts, event_seq) acting on one key, also against the
    events of earlier batches (`ledger`, the whole table, read within the tested events' time
    span): no order between them but the fingerprint's. A row per such pair. -#}
{% test change_events_unambiguous_order(model, ledger, key_columns) %}
    {%- set names = adapter.get_columns_in_relation(ledger) | map(attribute='name') | map('lower') | list -%}
    {%- set position = 'event_position' if 'event_position' in names else 'cast(null as array<bigint>)' -%}
    {%- set image_key -%}
        named_struct({% for key in key_columns %}'{{ key }}', image.{{ key }}{{ ', ' if not loop.last }}{% endfor %})
    {%- endset -%}
    {#- The keys an event acts on: an insert's or update's image key, an update's or delete's
        old key. -#}
    {%- set actions = [("'insert', 'update'", image_key), ("'update', 'delete'", 'old_key')] -%}
    with
    {%- for name, relation in [('tested', model), ('every_event', ledger)] %}
        {{ name }} as (
            {%- for kinds, acted_on in actions %}
                select
                    {{ acted_on }} as acted_on,
                    {{ position }} as event_position,
                    event_ts,
                    coalesce(event_seq, 0) as event_seq,
                    event_fingerprint
                from {{ relation }}
                {%- if name == 'every_event' %}
                    cross join span
                {%- endif %}
                where
                    status = 'applied' and change_kind in ({{ kinds }})
                    {%- if name == 'every_event' %}
                        and event_ts between span.earliest and span.latest
                    {%- endif %}
                {{ 'union all' if not loop.last }}
            {%- endfor %}
        ),
        {%- if name == 'tested' %}

            span as (
                select
                    min(event_ts) as earliest,
                    max(event_ts) as latest
                from tested
            ),
        {%- endif %}
    {%- endfor %}

    pairs as (
        select distinct
            tested.acted_on,
            tested.event_position,
            tested.event_ts,
            tested.event_seq,
            tested.event_fingerprint
        from tested
        inner join every_event
            on
                tested.acted_on = every_event.acted_on
                and tested.event_position <=> every_event.event_position
                and tested.event_ts = every_event.event_ts
                and tested.event_seq = every_event.event_seq
                and tested.event_fingerprint != every_event.event_fingerprint
    )

    select * from pairs
{% endtest %}
