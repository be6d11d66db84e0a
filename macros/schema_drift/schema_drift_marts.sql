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
    variations whose attribute types conflict with their event type's superset schema. An
    incremental run reads the bronze loads above the table's covered mark (every row of a load at
    or below the registry's highest registered load is final: a variation's status never changes
    once registered); its merge (merge_replace_from: load_seq) replaces the rows of those loads,
    so a rerun or an overlapping run writes them once. -#}
{% macro schema_drift_quarantine(bronze, registry) %}
{%- set covered = spark_cdc.schema_drift_covered_through(this) if is_incremental() else none %}
with

bronze as (
    select * from {{ bronze }}
    {%- if covered is not none %}
    where load_seq > {{ covered }}
    {%- endif %}
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


{#- The quarantine's covered mark: the highest bronze load whose rows it holds for good (a table
    property its post-hook sets); none before the first mark. -#}
{% macro schema_drift_covered_through(relation) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set found = namespace(value=none) -%}
    {%- for row in run_query('show tblproperties ' ~ relation).rows -%}
        {%- if row[0] == 'spark_cdc.covered_through_load' -%}
            {%- set found.value = row[1] | int -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found.value) }}
{% endmacro %}


{#- Pre-hook of the quarantine: the highest bronze load the registry has registered, as this
    run starts, kept in a session setting for the post-hook (a registry run after this read
    cannot move the mark past what this run saw). -#}
{% macro schema_drift_note_registered(registry) %}
    {%- set found = run_query('select max(last_load_seq) from ' ~ registry) if execute else none -%}
    {%- set through = found.columns[0].values()[0] if found is not none else none -%}
    {%- if through is not none -%}
        set spark_cdc.schema_drift.registered_through = {{ through | int }}
    {%- endif -%}
{% endmacro %}


{#- Post-hook of the quarantine: its covered mark becomes the registered load its pre-hook saw.
    A run killed before this leaves the earlier mark: the next run reads those loads again and
    replaces their rows. -#}
{% macro schema_drift_record_covered() %}
    {%- set through = spark_cdc.session_setting('spark_cdc.schema_drift.registered_through') -%}
    {%- if through is not none -%}
        alter table {{ this }} set tblproperties (
            'spark_cdc.covered_through_load' = '{{ through | int }}'
        )
    {%- endif -%}
{% endmacro %}


{#- Per event type and bronze load: events in, parsed into silver, quarantined, still pending,
    new variations and the schema version in force after the load. An incremental run
    recomputes the loads above the table's highest and the loads it still shows pending events
    for (a row without pending events is final), merged on (event_type, load_seq). -#}
{% macro schema_drift_run_summary(bronze, registry, silver_loads) %}
{%- set since = spark_cdc.schema_drift_summary_since(this) if is_incremental() else none %}
with

bronze as (
    select
        load_seq,
        ingested_at,
        variation_hash,
        has_parse_error,
        coalesce(event_type, '(unknown)') as event_type
    from {{ bronze }}
    {%- if since is not none %}
    where load_seq >= {{ since }}
    {%- endif %}
),

registry as (
    select * from {{ registry }}
),

silver as (
    select
        event_type,
        max(to_load_seq) as silver_through,
        max_by(silver_table, loaded_at) as silver_table
    from {{ spark_cdc.schema_drift_silver_logs(silver_loads) }}
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


{#- The feed's silver logs: its own and those of its event groups (<log>__<group>, written by the
    groups' streams), as one relation; none yet: an empty one. -#}
{% macro schema_drift_silver_logs(silver_loads) %}
    {%- set names = [] -%}
    {%- if execute -%}
        {%- set found = run_query(
            "show tables in " ~ silver_loads.schema ~ " like '" ~ silver_loads.identifier ~ "*'") -%}
        {%- for row in found.rows -%}
            {%- set name = row[1] | lower -%}
            {%- if name == silver_loads.identifier | lower
                or name.startswith(silver_loads.identifier | lower ~ '__') -%}
                {%- do names.append(name) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if not execute or names == [silver_loads.identifier | lower] -%}
        {{ silver_loads }}
    {%- elif names | length == 0 -%}
        {#- no silver written yet (a grouped feed's ingest ran, no group yet) -#}
        (
            select
                cast(null as string) as event_type,
                cast(null as bigint) as to_load_seq,
                cast(null as string) as silver_table,
                cast(null as timestamp) as loaded_at
            where false
        )
    {%- else -%}
        (
        {%- for name in names | sort %}
            select event_type, to_load_seq, silver_table, loaded_at
            from {{ silver_loads.schema }}.{{ name }}
            {%- if not loop.last %}
            union all
            {%- endif %}
        {%- endfor %}
        )
    {%- endif -%}
{% endmacro %}


{#- The lowest load an incremental run summary recomputes: its lowest load with pending events,
    else the load above its highest; none when the table is empty. -#}
{% macro schema_drift_summary_since(relation) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set found = run_query(
        'select coalesce(min(case when pending > 0 then load_seq end), max(load_seq) + 1) from '
        ~ relation) -%}
    {%- set value = found.columns[0].values()[0] -%}
    {{ return(none if value is none else value | int) }}
{% endmacro %}
