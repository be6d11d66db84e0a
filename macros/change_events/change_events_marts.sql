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

{#- A version counts for the run that took in its event (by the event's fingerprint), not
    for the run that wrote it: a run killed between its ledger and history commits and its
    rerun then summarize as one uninterrupted run would. Versions of the initial rows (no
    event) count for the first run, which took them in. -#}
applied_events as (
    select
        event_fingerprint,
        min(process_id) as process_id
    from {{ ledger }}
    where status = 'applied'
    group by event_fingerprint
),

first_run as (
    select min_by(process_id, _batch_id) as process_id
    from {{ ledger }}
),

versions as (
    select
        coalesce(
            applied_events.process_id, first_run.process_id, history.process_id
        ) as process_id,
        count(*) as versions_written,
        count_if(history.is_ambiguous) as ambiguous_versions
    from {{ history }} as history
    cross join first_run
    left join applied_events
        on history.event_fingerprint = applied_events.event_fingerprint
    group by 1
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
