{#-
    The change rows of a snapshot run, computed once and held in Spark's cache for the run:
    spark__snapshot_staging_table caches them, spark__snapshot_merge_sql merges from them,
    spark__post_snapshot drops them.
-#}

{#- Whether this snapshot caches its change rows: Delta snapshots (file_format delta), unless
    the config snapshot_cache_changes is false (then the MERGE reads the staging view, as in
    dbt-spark, and computes the changes inside the MERGE). -#}
{% macro snapshot_caches_changes() %}
    {{ return(execute
        and (config.get('file_format') or '') | lower == 'delta'
        and (config.get('snapshot_cache_changes', true) | string | lower) != 'false') }}
{% endmacro %}


{#- This invocation's cached relations: temporary views `<snapshot>__dbt_<part>_<id>` of the
    session (part `keys`: stage 1, the changed keys; `changes`: stage 2, the change rows the MERGE
    reads), one per snapshot and invocation, so that two snapshots (or two runs) never share one. -#}
{% macro snapshot_cached_changes_relation(target_relation, part='changes') %}
    {%- set run_suffix = (invocation_id | replace('-', ''))[:16] -%}
    {{ return(api.Relation.create(
        identifier=target_relation.identifier ~ '__dbt_' ~ part ~ '_' ~ run_suffix,
        schema=none, database=none, type='view')) }}
{% endmacro %}


{#- Whether a run compares the source with the open rows by digest first (the timestamp
    strategy; config snapshot_compare_digests: false turns it off), so that a run with nothing
    to change skips the change rows. -#}
{% macro snapshot_compares_digests() %}
    {{ return(config.get('strategy') == 'timestamp'
        and (config.get('snapshot_compare_digests', true) | string | lower) != 'false') }}
{% endmacro %}


{#- A run with nothing to change: its cached changes are an empty relation, so the MERGE macro
    finds no change and runs no MERGE. -#}
{% macro snapshot_cache_no_changes(target_relation) %}
    {%- call statement('snapshot_no_changes') -%}
        create or replace temporary view {{ spark_cdc.snapshot_cached_changes_relation(target_relation) }} as
        select 'insert' as dbt_change_type where false
    {%- endcall -%}
{% endmacro %}


{#- The latest version of a Delta table. -#}
{% macro snapshot_table_version(relation) %}
    {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
    {{ return(history.rows[0][0]) }}
{% endmacro %}


{#- Compute the change rows once into the session's cache (CACHE TABLE is eager: the source is
    read and joined with the open rows here, and never again in this run): the changed keys
    (stage 1), then their change rows (stage 2; the closed rows are read only when a changed key
    has no open row). Both read the snapshot table as of its version
    now, so the MERGE's commit leaves them as they are. -#}
{% macro snapshot_cache_changes(strategy, source_sql, target_relation, plan) %}
    {%- set version = spark_cdc.snapshot_table_version(target_relation) -%}
    {%- set keys = spark_cdc.snapshot_cached_changes_relation(target_relation, 'keys') -%}
    {%- set changes = spark_cdc.snapshot_cached_changes_relation(target_relation) -%}
    {%- call statement('snapshot_cache_changed_keys') -%}
        cache table {{ keys }} as
        {{ spark_cdc.snapshot_changed_keys_sql(strategy, source_sql, target_relation, plan, version) }}
    {%- endcall -%}
    {%- set find_last_closed = false -%}
    {%- set closed_since = none -%}
    {%- if strategy.hard_deletes == 'invalidate' -%}
        {%- set returning = run_query(
            'select count(*), cast(min(source_data.' ~ plan.columns.dbt_updated_at ~ ') as string) from '
            ~ keys ~ ' where not ' ~ plan.has_open).rows[0] -%}
        {%- set find_last_closed = returning[0] > 0 and returning[1] is not none -%}
        {%- set closed_since = returning[1] -%}
    {%- endif -%}
    {%- call statement('snapshot_cache_changes') -%}
        cache table {{ changes }} as
        {{ spark_cdc.snapshot_change_rows_sql(strategy, target_relation, plan, keys, version, find_last_closed, closed_since) }}
    {%- endcall -%}
{% endmacro %}


{#-
    As dbt-spark 1.11.0's spark__post_snapshot (drops the staging view), and [spark_cdc] releases
    this invocation's cached changes.
-#}
{% macro spark__post_snapshot(staging_relation) %}
    {%- do adapter.drop_relation(staging_relation) -%}
    {%- if spark_cdc.snapshot_caches_changes() -%}
        {#- dropping a cached temporary view drops its cached rows too -#}
        {%- for part in ('changes', 'keys') -%}
            {%- set cached = spark_cdc.snapshot_cached_changes_relation(this, part) -%}
            {%- call statement('snapshot_drop_' ~ part) -%}
                drop view if exists {{ cached }}
            {%- endcall -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}
