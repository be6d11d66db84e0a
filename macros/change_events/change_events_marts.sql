{#- The SQL models of a change-event source: quarantine and run summary, from its ledger (and
    history). Both are incremental: a run reads the ledger batches above the ones its table
    holds (the ledger's files keep _batch_id statistics), not the whole ledger. -#}

{#- The highest value of `column` in `relation` (Delta answers it from its file statistics),
    none when the relation is empty or when not executing. -#}
{% macro highest_value(relation, column) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set found = run_query('select max(' ~ column ~ ') from ' ~ relation) -%}
    {{ return(found.columns[0].values()[0]) }}
{% endmacro %}


{#- Events that were not applied, with the raw event and the reason: on an incremental run, those
    of the batches above the highest batch the table holds (the model's merge replaces the rows
    of those batches: a rerun or an overlapping run writes them once). -#}
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
where
    status = 'quarantined'
    {%- set through = spark_cdc.highest_value(this, '_batch_id') if is_incremental() else none %}
    {%- if through is not none %}
    and _batch_id > {{ through | int }}
    {%- endif %}
{% endmacro %}


{#- The runs whose summary rows an incremental run writes, and the earliest event_ts of their
    applied events: the runs that took in the ledger batches above the table's last batch, and
    the earlier runs whose ambiguous versions those runs' history writes may have changed. An
    earlier run's counts change only there: each applied event has the same versions whoever
    resolves it (version_id = its fingerprint, ":out" for a move's delete), and a re-resolved
    version becomes ambiguous when a new event ties with it, never the reverse; so an earlier
    run is recounted only when a version of its events that the new runs rewrote is ambiguous
    (a late event that ties with none leaves every earlier row as it is; ambiguous versions are
    rare, and Parquet's row-group statistics skip the row groups that hold none). Each bound is a
    literal, so that Delta skips the ledger and history files outside it. The versions the new
    runs wrote are read from the history's Change Data Feed when it answers ('written':
    change_events_history_feed; the open versions' files mix every run's rows, so no file
    statistic skips them in the history itself). none: summarize every run (a full build, or the
    first run's ambiguity changed: its row also counts the initial rows). -#}
{% macro change_events_summary_scope(ledger, history) %}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {#- The table's last batch and its first run, from one read of it (a row per run). -#}
    {%- set held = run_query(
        "select max(last_batch_id), min_by(process_id, first_batch_id) from " ~ this) -%}
    {%- set through = held.columns[0].values()[0] -%}
    {%- set first_run = held.columns[1].values()[0] -%}
    {%- if through is none -%}{{ return(none) }}{%- endif -%}
    {%- set found = run_query(
        "select concat_ws(',', sort_array(collect_set(process_id))), "
        ~ "cast(min(case when status = 'applied' then event_ts end) as string) "
        ~ "from " ~ ledger ~ " where _batch_id > " ~ (through | int)) -%}
    {%- set new_runs = spark_cdc.split_list(found.columns[0].values()[0]) -%}
    {%- set lowest = found.columns[1].values()[0] -%}
    {%- if not new_runs -%}{{ return({'runs': [], 'since': none, 'written': none}) }}{%- endif -%}
    {#- A current-only source has no versions: only the new runs' counts change. -#}
    {%- if history is none -%}{{ return({'runs': new_runs, 'since': none, 'written': none}) }}{%- endif -%}
    {%- set runs = [] + new_runs -%}
    {#- The versions the new runs wrote, from the history's feed when it answers. -#}
    {%- set settings = (config.get('meta') or {}).get('change_events') or {} -%}
    {%- set written = spark_cdc.change_events_history_feed(
        history, through, settings.get('key_columns')) -%}
    {%- if lowest is not none -%}
        {#- The new runs' ambiguous versions first: none (the common case) spares the ledger. -#}
        {%- set ambiguous = run_query(
            "select concat_ws(',', collect_set(event_fingerprint)) from "
            ~ (history if written is none else written ~ ' as written')
            ~ " where process_id in (" ~ spark_cdc.sql_strings(new_runs) ~ ")"
            ~ " and is_ambiguous and valid_from >= '" ~ lowest ~ "'").columns[0].values()[0] -%}
        {%- set fingerprints = spark_cdc.split_list(ambiguous) -%}
        {%- set affected = none if not fingerprints else run_query(
            "select concat_ws(',', sort_array(collect_set(process_id))) from " ~ ledger
            ~ " where status = 'applied' and event_ts >= '" ~ lowest ~ "'"
            ~ " and event_fingerprint in (" ~ spark_cdc.sql_strings(fingerprints) ~ ")"
        ).columns[0].values()[0] -%}
        {%- for run in spark_cdc.split_list(affected) if run not in runs -%}
            {%- do runs.append(run) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if first_run in runs -%}{{ return(none) }}{%- endif -%}
    {#- The feed holds every version of the new runs' events (all written after the point);
        an earlier run's may predate it: then the history is read from the runs' first event. -#}
    {%- if written is not none and runs == new_runs -%}
        {{ return({'runs': runs, 'since': none, 'written': written}) }}
    {%- endif -%}
    {%- set since = run_query(
        "select cast(min(event_ts) as string) from " ~ ledger
        ~ " where status = 'applied' and process_id in (" ~ spark_cdc.sql_strings(runs) ~ ")"
    ).columns[0].values()[0] -%}
    {{ return({'runs': runs, 'since': since, 'written': none}) }}
{% endmacro %}


{#- The items of a comma-separated text (a run query's concat_ws of process ids); [] for none. -#}
{% macro split_list(text) %}
    {{ return([] if not text else (text | string).split(',')) }}
{% endmacro %}


{#- `values` as a comma-separated list of SQL string literals. -#}
{% macro sql_strings(values) -%}
    {%- for value in values -%}'{{ value | replace("'", "''") }}'{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}


{#- One row per dbt run that took in events: what came in, what happened to it. An incremental
    run writes the rows of change_events_summary_scope's runs (the model merges on process_id).
    history none: a current-only source (stored_as_scd_type 1), whose runs write no versions
    (versions_written and ambiguous_versions are NULL). -#}
{% macro change_events_run_summary(ledger, history=none) %}
{%- set scope = spark_cdc.change_events_summary_scope(ledger, history) if is_incremental() else none %}
{%- set runs_filter = none if scope is none else
    ('false' if not scope.runs else 'process_id in (' ~ spark_cdc.sql_strings(scope.runs) ~ ')') %}
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
        count_if(status = 'skipped') as skipped,
        count_if(quarantine_reason = 'too_late') as too_late
    from {{ ledger }}
    {%- if runs_filter %}
    where {{ runs_filter }}
    {%- endif %}
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
    where
        status = 'applied'
        {%- if runs_filter %}
        and {{ runs_filter }}
        {%- endif %}
    group by event_fingerprint
),

{%- if history is none %}

versions as (
    select
        process_id,
        cast(null as bigint) as versions_written,
        cast(null as bigint) as ambiguous_versions
    from events
)
{%- elif scope is none %}

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
{%- else %}

versions as (
    select
        applied_events.process_id,
        count(*) as versions_written,
        count_if(history.is_ambiguous) as ambiguous_versions
    from {{ history if scope.written is none else scope.written }} as history
    inner join applied_events
        on history.event_fingerprint = applied_events.event_fingerprint
    {%- if scope.written is not none %}
    {%- elif scope.since is none %}
    where false
    {%- else %}
    where history.valid_from >= '{{ scope.since }}'
    {%- endif %}
    group by 1
)
{%- endif %}

select
    events.process_id,
    events.first_batch_id,
    events.last_batch_id,
    events.batches,
    events.events_in,
    events.applied,
    events.duplicates,
    events.quarantined,
    events.skipped,
    events.too_late,
    {%- if history is none %}
    versions.versions_written,
    versions.ambiguous_versions
    {%- else %}
    coalesce(versions.versions_written, 0) as versions_written,
    coalesce(versions.ambiguous_versions, 0) as ambiguous_versions
    {%- endif %}
from events
left join versions on events.process_id = versions.process_id
{% endmacro %}
