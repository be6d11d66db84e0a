-- Bronze events kept out of silver, with why: lines that cannot be registered, and events of
-- variations whose attribute types conflict with their event type's superset schema.
with

bronze as (
    select * from {{ ref('int_schema_drift__bronze_events') }}
),

registry as (
    select * from {{ ref('schema_drift__schema_registry') }}
),

unregistrable as (
    select
        load_seq,
        ingested_at,
        source_file,
        batch_id,
        event_type,
        variation_hash,
        payload,
        parse_error as quarantine_reason
    from bronze
    where has_parse_error
),

conflicting as (
    select
        bronze.load_seq,
        bronze.ingested_at,
        bronze.source_file,
        bronze.batch_id,
        bronze.event_type,
        bronze.variation_hash,
        bronze.payload,
        registry.conflict_reason as quarantine_reason
    from bronze
    inner join registry
        on
            bronze.event_type = registry.event_type
            and bronze.variation_hash = registry.variation_hash
    where registry.status = 'conflict'
)

select * from unregistrable
union all
select * from conflicting
