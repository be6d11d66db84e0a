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
    with tested as (
        select
            {{ image_key }} as acted_on,
            {{ position }} as event_position,
            event_ts,
            coalesce(event_seq, 0) as event_seq,
            event_fingerprint
        from {{ model }}
        where status = 'applied' and change_kind in ('insert', 'update')
        union all
        select
            old_key as acted_on,
            {{ position }} as event_position,
            event_ts,
            coalesce(event_seq, 0) as event_seq,
            event_fingerprint
        from {{ model }}
        where status = 'applied' and change_kind in ('update', 'delete')
    ),

    span as (
        select
            min(event_ts) as earliest,
            max(event_ts) as latest
        from tested
    ),

    every_event as (
        select
            {{ image_key }} as acted_on,
            {{ position }} as event_position,
            event_ts,
            coalesce(event_seq, 0) as event_seq,
            event_fingerprint
        from {{ ledger }}
        cross join span
        where
            status = 'applied' and change_kind in ('insert', 'update')
            and event_ts between span.earliest and span.latest
        union all
        select
            old_key as acted_on,
            {{ position }} as event_position,
            event_ts,
            coalesce(event_seq, 0) as event_seq,
            event_fingerprint
        from {{ ledger }}
        cross join span
        where
            status = 'applied' and change_kind in ('update', 'delete')
            and event_ts between span.earliest and span.latest
    )

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
{% endtest %}
