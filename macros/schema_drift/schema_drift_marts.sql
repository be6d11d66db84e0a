{#- The SQL models of a JSON feed: its staging view, quarantine and run summary. -#}

{#- Every landed JSON line with the file it came from; the batch is the name of the file's
    folder (found without a regular expression: it is computed for every line). -#}
{% macro schema_drift_raw_events(landing) %}
select
    landed.value as payload,
    landed._metadata.file_path as source_file,
    landed._metadata.file_modification_time as file_modified_at,
    substring_index(substring_index(landed._metadata.file_path, '/', -2), '/', 1) as batch_id
from {{ landing }} as landed
{% endmacro %}


{#- Bronze events kept out of silver, with why: lines that cannot be registered, and events of
    variations whose attribute types conflict with their event type's superset schema. -#}
{% macro schema_drift_quarantine(bronze, registry) %}
with

bronze as (
    select * from {{ bronze }}
),

registry as (
    select * from {{ registry }}
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
{% endmacro %}


{#- Per event type and bronze load: events in, parsed into silver, quarantined, still pending,
    new variations and the schema version in force after the load. -#}
{% macro schema_drift_run_summary(bronze, registry, silver_loads) %}
with

bronze as (
    select
        load_seq,
        ingested_at,
        variation_hash,
        has_parse_error,
        coalesce(event_type, '(unknown)') as event_type
    from {{ bronze }}
),

registry as (
    select * from {{ registry }}
),

silver as (
    select
        event_type,
        max(to_load_seq) as silver_through,
        max_by(silver_table, loaded_at) as silver_table
    from {{ silver_loads }}
    group by event_type
),

events as (
    select
        bronze.event_type,
        bronze.load_seq,
        min(bronze.ingested_at) as ingested_at,
        count(*) as events_in,
        count_if(
            registry.status = 'accepted' and bronze.load_seq <= silver.silver_through
        ) as parsed,
        count_if(bronze.has_parse_error or registry.status = 'conflict') as quarantined,
        count_if(
            not bronze.has_parse_error
            and (
                registry.status is null
                or (
                    registry.status = 'accepted'
                    and bronze.load_seq > coalesce(silver.silver_through, 0)
                )
            )
        ) as pending
    from bronze
    left join registry
        on
            bronze.event_type = registry.event_type
            and bronze.variation_hash = registry.variation_hash
    left join silver
        on bronze.event_type = silver.event_type
    group by bronze.event_type, bronze.load_seq
),

new_variations as (
    select
        event_type,
        first_load_seq as load_seq,
        count_if(status = 'accepted') as new_variations,
        count_if(status = 'conflict') as conflicting_variations
    from registry
    group by event_type, first_load_seq
),

versions_in_force as (
    select
        events.event_type,
        events.load_seq,
        max(registry.schema_version) as schema_version
    from events
    inner join registry
        on
            events.event_type = registry.event_type
            and registry.status = 'accepted'
            and events.load_seq >= registry.first_load_seq
    group by events.event_type, events.load_seq
)

select
    events.event_type,
    events.load_seq,
    events.ingested_at,
    events.events_in,
    events.parsed,
    events.quarantined,
    events.pending,
    silver.silver_table,
    versions_in_force.schema_version,
    coalesce(new_variations.new_variations, 0) as new_variations,
    coalesce(new_variations.conflicting_variations, 0) as conflicting_variations
from events
left join new_variations
    on
        events.event_type = new_variations.event_type
        and events.load_seq = new_variations.load_seq
left join versions_in_force
    on
        events.event_type = versions_in_force.event_type
        and events.load_seq = versions_in_force.load_seq
left join silver
    on events.event_type = silver.event_type
{% endmacro %}
