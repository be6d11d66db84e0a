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


{#- Whether a run first compares the source with the open rows by digest (the timestamp
    strategy; config snapshot_compare_digests: false turns it off), so that a run with nothing
    to change reads no join at all. -#}
{% macro snapshot_compares_digests() %}
    {{ return(config.get('strategy') == 'timestamp'
        and (config.get('snapshot_compare_digests', true) | string | lower) != 'false') }}
{% endmacro %}


{#- Two 64-bit hashes of `values` (the key expressions, then the updated_at expression), hash_1
    and hash_2. -#}
{% macro snapshot_row_hashes(values) -%}
    {%- set listed = values | join(', ') -%}
    xxhash64({{ listed }}) as hash_1,
    xxhash64('spark_cdc', {{ listed }}) as hash_2
{%- endmacro %}


{#- Order-independent sums of hash_1 and hash_2: each hash's low and high 32 bits summed apart as
    bigints (no overflow below 2^31 rows; try_sum gives NULL, never equal, beyond), so together
    with the row count they are a 128-bit digest of the multiset of hashed rows. -#}
{% macro snapshot_hash_sums() -%}
    {%- for index in (1, 2) -%}
    try_sum(hash_{{ index }} & 4294967295) as digest_{{ index }}_low,
    try_sum(shiftright(hash_{{ index }}, 32)) as digest_{{ index }}_high{{ ',\n' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}


{#-
    A query whose one row's `unchanged` says that a timestamp-strategy run has nothing to change.

    The run changes nothing when the query's (key, updated_at) rows are exactly the (key,
    dbt_updated_at) pairs of the table's open rows (its open deletion rows aside), counted with
    their repeats: every source key then has an open row whose version started at or after that
    updated_at (a version never starts before its own updated_at), so no row is newer (dbt's
    row_changed: valid_from < updated_at) and no open row lacks its key, so nothing is deleted;
    and since the open rows hold each key once, the query holds no duplicate and no NULL key (the
    key check has nothing to find). The two sides are compared by row count and the sums of two
    64-bit hashes per row (an accidental match is about one in 2^128), each side read by one
    aggregate without a shuffle. Any difference — an empty query too — sends the run to the
    changed keys' join, which then decides (and finds nothing when, say, an updated_at moved
    back).
-#}
{% macro snapshot_unchanged_sql(strategy, source_sql, target_relation) -%}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {%- set keys = spark_cdc.snapshot_key_list(strategy.unique_key) -%}
    select
        coalesce(
            source_side.source_rows > 0
            and source_side.source_rows = open_side.open_rows
            {%- for part in ('1_low', '1_high', '2_low', '2_high') %}
            and source_side.digest_{{ part }} = open_side.digest_{{ part }}
            {%- endfor %},
            false
        ) as unchanged
    from (
        select
            count(*) as source_rows,
            {{ spark_cdc.snapshot_hash_sums() | indent(12) }}
        from (
            select {{ spark_cdc.snapshot_row_hashes(keys + [strategy.updated_at]) | indent(16) }}
            from ({{ source_sql }}) as snapshot_query
        ) as source_hashes
    ) as source_side
    cross join (
        select
            count(*) as open_rows,
            {{ spark_cdc.snapshot_hash_sums() | indent(12) }}
        from (
            select {{ spark_cdc.snapshot_row_hashes(keys + [columns.dbt_updated_at]) | indent(16) }}
            from {{ target_relation }}
            where {{ spark_cdc.snapshot_row_is_open('', columns) }}
            {%- if strategy.hard_deletes == 'new_record' %}
                and not coalesce({{ columns.dbt_is_deleted }}, false)
            {%- endif %}
        ) as open_hashes
    ) as open_side
{%- endmacro %}


{#- Whether a timestamp-strategy run has nothing to change (snapshot_unchanged_sql). -#}
{% macro snapshot_source_unchanged(strategy, source_sql, target_relation) %}
    {%- set result = run_query(spark_cdc.snapshot_unchanged_sql(strategy, source_sql, target_relation)) -%}
    {{ return(result.rows[0][0] == true) }}
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
    (stage 1, which also checks the source's keys), then their change rows (stage 2; the closed
    rows are read only when a changed key has no open row). Both read the snapshot table as of its
    version now, so the MERGE's commit leaves them as they are. A run whose stage 1 finds no
    changed key caches an empty set of changes (no stage 2, no MERGE); one whose changed keys come
    from no source row checks that the source is not empty when it must not be. -#}
{% macro snapshot_cache_changes(strategy, source_sql, target_relation, plan) %}
    {%- set version = spark_cdc.snapshot_table_version(target_relation) -%}
    {%- set keys = spark_cdc.snapshot_cached_changes_relation(target_relation, 'keys') -%}
    {%- set changes = spark_cdc.snapshot_cached_changes_relation(target_relation) -%}
    {%- set check_keys = config.get('snapshot_check_unique_keys', true) -%}
    {%- call statement('snapshot_cache_changed_keys') -%}
        cache table {{ keys }} as
        {{ spark_cdc.snapshot_changed_keys_sql(
            strategy, source_sql, target_relation, plan, version, check_keys) }}
    {%- endcall -%}
    {%- set summary = run_query(
        'select count(*), count_if(' ~ plan.has_source ~ '), count_if(not ' ~ plan.has_open ~ '), '
        ~ 'cast(min(case when not ' ~ plan.has_open ~ ' then source_data.' ~ plan.columns.dbt_updated_at
        ~ ' end) as string) from ' ~ keys).rows[0] -%}
    {%- if summary[0] > 0 and summary[1] == 0 and spark_cdc.snapshot_refuses_empty_source(strategy) -%}
        {#- every change is a delete: refused if the source is empty -#}
        {%- if run_query(spark_cdc.snapshot_source_probe_sql(source_sql)).rows[0][0] == 0 -%}
            {%- do spark_cdc.snapshot_raise_empty_source(strategy) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if summary[0] == 0 -%}
        {%- do spark_cdc.snapshot_cache_no_changes(target_relation) -%}
        {{ return(none) }}
    {%- endif -%}
    {#- only a run that will merge, past every guard, alters the table (a refused or unchanged
        run leaves it at its version); the cached keys read a fixed version of it, so they stay
        valid -#}
    {%- do spark_cdc.snapshot_widen_columns(source_sql, target_relation) -%}
    {%- do spark_cdc.snapshot_ensure_deletion_vectors(target_relation) -%}
    {%- set find_last_closed = false -%}
    {%- set closed_since = none -%}
    {%- if strategy.hard_deletes == 'invalidate' -%}
        {#- the changed keys without an open row, and the earliest updated_at among them -#}
        {%- set find_last_closed = summary[2] > 0 and summary[3] is not none -%}
        {%- set closed_since = summary[3] -%}
    {%- endif -%}
    {%- call statement('snapshot_cache_changes') -%}
        cache table {{ changes }} as
        {{ spark_cdc.snapshot_change_rows_sql(strategy, target_relation, plan, keys, version, find_last_closed, closed_since) }}
    {%- endcall -%}
{% endmacro %}


{#-
    As dbt-spark 1.11.0's spark__post_snapshot (drops the staging view), and [spark_cdc] releases
    this invocation's cached changes, then maintains the table when this run merged and
    maintenance is due (snapshot_maintenance.sql).
-#}
{% macro spark__post_snapshot(staging_relation) %}
    {%- set maintenance = spark_cdc.snapshot_maintenance_settings() -%}
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
    {%- if spark_cdc.snapshot_run_merged() -%}
        {%- do spark_cdc.snapshot_maintain(this, maintenance) -%}
    {%- endif -%}
{% endmacro %}


{#- Whether this run merged into the snapshot table: with cached changes, when it counted some
    (spark__snapshot_merge_sql's statement); otherwise always (the MERGE reads the staging view).
    Iceberg and Hudi tables are not Delta tables: never. -#}
{% macro snapshot_run_merged() %}
    {%- if (config.get('file_format') or '') | lower != 'delta' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set counted = load_result('snapshot_change_count') -%}
    {{ return(counted is none or counted.table.rows[0][0] > 0) }}
{% endmacro %}
