{#-
    A snapshot run on a snapshot table that exists, step by step, in the order dbt-spark 1.11.0's
    snapshot materialization calls this package's three overrides. Each step is one macro whose
    inputs are its arguments; this file is the whole flow, read from top to bottom. (A first run
    is one statement: spark__build_snapshot_table, build_snapshot_table.sql.)

    spark__snapshot_staging_table (dbt-spark makes the staging view from the select it returns):
      1. guards on the config: maintenance settings, the high end date, updated_at's type
      2. plan: per kind of change the condition and the values, and the open-row columns read
      3. changed keys: none when the digests match (timestamp strategy), else one join of the
         query with the open rows, cached, that checks the query's keys on the way (their
         count is kept for steps 7 and 9)
      4. guard on the query: an empty query with hard deletes is refused
      5. widen: the first writes, only for a run that will merge (type widening, deletion vectors)
      6. change rows: cached for the MERGE
    (dbt-spark describes the staging view's columns and adds the missing ones to the table)
    spark__snapshot_merge_sql:
      7. merge: one Delta MERGE of the cached change rows, none when there is no change
    (dbt commits, runs the post-hooks)
    spark__post_snapshot:
      8. clean up: the staging view and this run's cached relations dropped
      9. maintain: OPTIMIZE (and REORG, VACUUM when configured) when due

    A refused run stops at step 1, 3 or 4, before the first write (step 5). A snapshot that does
    not cache its changes (not Delta, or snapshot_cache_changes: false) checks its query in one
    pass at step 3 and lets the MERGE compute the changes from the staging view, as dbt-spark does.
-#}


{% macro spark__snapshot_staging_table(strategy, source_sql, target_relation) -%}
    {%- set caches = spark_cdc.snapshot_caches_changes() and not target_relation.is_iceberg -%}

    {#- 1. guards on the config -#}
    {%- do spark_cdc.snapshot_maintenance_settings(target_relation) -%}
    {%- do spark_cdc.snapshot_assert_updated_at_type(strategy, source_sql) -%}

    {#- 2. plan -#}
    {%- set plan = spark_cdc.snapshot_change_plan(strategy, source_sql, target_relation) -%}
    {%- set staging_sql = spark_cdc.snapshot_changes_sql(strategy, source_sql, target_relation, plan) -%}

    {%- if not caches -%}
        {#- 3-4. the query's keys and emptiness in one pass; 5. widen -#}
        {%- do spark_cdc.snapshot_assert_source(strategy, source_sql, check_not_empty=true) -%}
        {%- if not target_relation.is_iceberg -%}
            {%- do spark_cdc.snapshot_widen_columns(source_sql, target_relation) -%}
        {%- endif -%}
        {{ return(staging_sql) }}
    {%- endif -%}

    {#- 3. changed keys -#}
    {%- set found = spark_cdc.snapshot_find_changed_keys(strategy, source_sql, target_relation, plan) -%}

    {#- 4. guard on the query -#}
    {%- do spark_cdc.snapshot_refuse_empty_source(strategy, source_sql, found) -%}

    {%- do spark_cdc.snapshot_keep_change_count(found.changed_keys) -%}
    {%- if found.changed_keys == 0 -%}
        {%- do spark_cdc.snapshot_cache_no_changes(target_relation) -%}
        {{ return(staging_sql) }}
    {%- endif -%}

    {#- 5. widen -#}
    {%- do spark_cdc.snapshot_widen_columns(source_sql, target_relation) -%}
    {%- do spark_cdc.snapshot_ensure_deletion_vectors(target_relation) -%}

    {#- 6. change rows -#}
    {%- do spark_cdc.snapshot_cache_change_rows(strategy, target_relation, plan, found) -%}
    {{ return(staging_sql) }}
{%- endmacro %}


{#- 7. merge: from the cached change rows, or (no cache) from the staging view. -#}
{% macro spark__snapshot_merge_sql(target, source, insert_cols) -%}
    {%- if spark_cdc.snapshot_caches_changes() and not target.is_iceberg -%}
        {%- set source = spark_cdc.snapshot_cached_changes_relation(target) -%}
        {%- if spark_cdc.snapshot_count_changes(source) == 0 -%}
            {{ return("select 'no change for " ~ target ~ ": nothing to merge' as snapshot_merge") }}
        {%- endif -%}
    {%- endif -%}
    {{ return(spark_cdc.snapshot_merge_statement(target, source, insert_cols)) }}
{%- endmacro %}


{#- 8. clean up, 9. maintain (a run that fails before this releases its cache when its dbt
    connection closes). -#}
{% macro spark__post_snapshot(staging_relation) %}
    {%- set maintenance = spark_cdc.snapshot_maintenance_settings(this) -%}

    {#- 8. clean up -#}
    {%- do spark_cdc.snapshot_clean_up(staging_relation, this) -%}

    {#- 9. maintain -#}
    {%- if spark_cdc.snapshot_run_merged() -%}
        {%- do spark_cdc.snapshot_maintain(this, maintenance) -%}
    {%- endif -%}
{% endmacro %}
