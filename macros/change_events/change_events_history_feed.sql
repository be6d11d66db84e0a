{#- The history versions written after a reader's mark, from the history's Change Data Feed
    (the SQL side of spark_cdc.change_events.history_feed, with the same rules).

    A reader whose mark is `through` (the highest ledger batch it reflects) reflects the history
    up to its point: the latest row write whose mark (spark_cdc_resolved_through_batch, in the
    commit's userMetadata) is `through` or below. The versions written since are those of the
    commits after the point; each version's latest image there is its state now. Returns a
    parenthesized query of the history's columns, or none when the feed cannot answer: the
    history keeps no feed, has no point, or a commit since the point is not a MERGE, WRITE or
    OPTIMIZE (a RESTORE, a full refresh, a schema or property change) or is about as old as the
    table's file retention. -#}
{% macro change_events_history_feed(history, through, key_columns) %}
    {%- if not execute or through is none or not key_columns -%}{{ return(none) }}{%- endif -%}
    {%- set properties = run_query('show tblproperties ' ~ history) -%}
    {%- set feed = namespace(on=false, retention='interval 7 days') -%}
    {%- for row in properties.rows -%}
        {%- if row[0] == 'delta.enableChangeDataFeed' -%}
            {%- set feed.on = (row[1] | string | lower) == 'true' -%}
        {%- elif row[0] == 'delta.deletedFileRetentionDuration' -%}
            {%- set feed.retention = row[1] | string | lower -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not feed.on -%}{{ return(none) }}{%- endif -%}
    {#- VACUUM may remove a feed file once it is older than the file retention: a commit within
        an hour of it is read from the history instead. -#}
    {%- set interval = modules.re.match(
        '^\\s*interval\\s+(\\d+)\\s+(second|minute|hour|day|week)s?\\s*$', feed.retention) -%}
    {%- if interval is none -%}{{ return(none) }}{%- endif -%}
    {%- set unit = {'second': 1, 'minute': 60, 'hour': 3600, 'day': 86400, 'week': 604800} -%}
    {%- set kept = (interval.group(1) | int) * unit[interval.group(2)] - 3600 -%}
    {%- set now = run_started_at.replace(tzinfo=none) -%}  {#- dbt's run start, in UTC -#}
    {%- set oldest = (now - modules.datetime.timedelta(seconds=kept)).strftime('%Y-%m-%d %H:%M:%S') -%}
    {%- set data_operations = [
        'WRITE', 'MERGE', 'CREATE TABLE AS SELECT', 'REPLACE TABLE AS SELECT',
        'CREATE OR REPLACE TABLE AS SELECT'
    ] -%}
    {%- set found = namespace(point=none, newer=false, plain=true, last=none) -%}
    {#- describe history lists the newest commit first -#}
    {%- for commit in run_query('describe history ' ~ history).rows -%}
        {%- if found.point is none -%}
            {%- set record = fromjson(commit['userMetadata'] or '{}', {}) -%}
            {%- set mark = record.get('spark_cdc_resolved_through_batch') if record is mapping else none -%}
            {%- set writes = commit['operation'] in data_operations -%}
            {%- if writes and mark is not none and (mark | int) <= (through | int) -%}
                {%- set found.point = commit['version'] | int -%}
            {%- else -%}
                {%- if found.last is none -%}{%- set found.last = commit['version'] | int -%}{%- endif -%}
                {%- if commit['operation'] not in ('MERGE', 'WRITE', 'OPTIMIZE') -%}
                    {%- set found.plain = false -%}
                {%- endif -%}
                {%- if (commit['timestamp'] | string | replace('T', ' '))[:19] < oldest -%}
                    {%- set found.plain = false -%}
                {%- endif -%}
                {%- if writes and mark is not none -%}{%- set found.newer = true -%}{%- endif -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if found.point is none or not found.plain -%}{{ return(none) }}{%- endif -%}
    {%- if not found.newer -%}
        {{ return('(select * from ' ~ history ~ ' where false)') }}
    {%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(history) | map(attribute='name') | list -%}
    {%- set quoted = [] -%}
    {%- for name in columns -%}{%- do quoted.append(adapter.quote(name)) -%}{%- endfor -%}
    {%- set keys = [] -%}
    {%- for name in key_columns -%}{%- do keys.append(adapter.quote(name)) -%}{%- endfor -%}
    {%- set query -%}
        (select {{ quoted | join(', ') }}
        from (
            select
                *,
                row_number() over (
                    partition by {{ keys | join(', ') }}, version_id
                    order by _commit_version desc
                ) as _image_rank
            from table_changes('{{ history }}', {{ found.point + 1 }}, {{ found.last }})
            where _change_type in ('insert', 'update_postimage', 'delete')
        )
        where _image_rank = 1 and _change_type != 'delete')
    {%- endset -%}
    {{ return(query) }}
{% endmacro %}
