{#- The SQL models of a change-event source: quarantine and run summary, from its ledger (and
    history). -#}

{#- Events that were not applied, with the raw event and the reason. -#}
{% macro change_events_quarantine(ledger) %}
select
    _batch_id,
    change_type,
    event_ts,
    event_seq,
    column_names,
    column_values,
    old_key_names,
    old_key_values,
    quarantine_reason,
    _raw_record as raw_record,
    _source_file as source_file,
    event_fingerprint,
    process_id
from {{ ledger }}
where status = 'quarantined'
{% endmacro %}


{#- One row per dbt run that took in events: what came in, what happened to it. -#}
{% macro change_events_run_summary(ledger, history) %}
with events as (
    select
        process_id,
        min(_batch_id) as first_batch_id,
        max(_batch_id) as last_batch_id,
        count(distinct _batch_id) as batches,
        count(*) as events_in,
        count_if(status = 'applied') as applied,
        count_if(status = 'duplicate') as duplicates,
        count_if(status = 'quarantined') as quarantined,
        count_if(quarantine_reason = 'too_late') as too_late
    from {{ ledger }}
    group by process_id
),

versions as (
    select
        process_id,
        count(*) as versions_written,
        count_if(is_ambiguous) as ambiguous_versions
    from {{ history }}
    group by process_id
)

select
    events.process_id,
    events.first_batch_id,
    events.last_batch_id,
    events.batches,
    events.events_in,
    events.applied,
    events.duplicates,
    events.quarantined,
    events.too_late,
    coalesce(versions.versions_written, 0) as versions_written,
    coalesce(versions.ambiguous_versions, 0) as ambiguous_versions
from events
left join versions on events.process_id = versions.process_id
{% endmacro %}
