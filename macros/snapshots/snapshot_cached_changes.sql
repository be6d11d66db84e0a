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


{#- This invocation's cached changes: a temporary view `<snapshot>__dbt_changes_<id>` of the
    session, one per snapshot and invocation, so that two snapshots (or two runs) never share one. -#}
{% macro snapshot_cached_changes_relation(target_relation) %}
    {%- set run_suffix = (invocation_id | replace('-', ''))[:16] -%}
    {{ return(api.Relation.create(
        identifier=target_relation.identifier ~ '__dbt_changes_' ~ run_suffix,
        schema=none, database=none, type='view')) }}
{% endmacro %}


{#- Compute the change rows once into the session's cache (CACHE TABLE is eager: the source is
    read and joined with the open rows here, and never again in this run). -#}
{% macro snapshot_cache_changes(changes_sql, target_relation) %}
    {%- set cached = spark_cdc.snapshot_cached_changes_relation(target_relation) -%}
    {%- call statement('snapshot_cache_changes') -%}
        cache table {{ cached }} as
        {{ changes_sql }}
    {%- endcall -%}
{% endmacro %}


{#-
    As dbt-spark 1.11.0's spark__post_snapshot (drops the staging view), and [spark_cdc] releases
    this invocation's cached changes.
-#}
{% macro spark__post_snapshot(staging_relation) %}
    {%- do adapter.drop_relation(staging_relation) -%}
    {%- if spark_cdc.snapshot_caches_changes() -%}
        {%- set cached = spark_cdc.snapshot_cached_changes_relation(this) -%}
        {%- call statement('snapshot_release_changes') -%}
            uncache table if exists {{ cached }}
        {%- endcall -%}
        {%- call statement('snapshot_drop_changes') -%}
            drop view if exists {{ cached }}
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}
