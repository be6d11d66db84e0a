{#-
    The change rows of a snapshot run, computed once and held in Spark's cache for the run: steps
    3, 4, 6, 7 and 8 of the flow (snapshot_flow.sql) and the digest test of step 3.
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
    reads), one per snapshot and invocation, so that two snapshots (or two runs) never share one.
    On a Spark Connect engine of the sparkcdc adapter they are global temporary views named after
    the dbt process (adapter.shared_cache_view), which the engine's next client drops if that
    process is killed before it does. -#}
{% macro snapshot_cached_changes_relation(target_relation, part='changes') %}
    {%- set run_suffix = (invocation_id | replace('-', ''))[:16] -%}
    {%- set identifier = target_relation.identifier ~ '__dbt_' ~ part ~ '_' ~ run_suffix -%}
    {%- set shared = adapter.shared_cache_view(target_relation ~ '/' ~ identifier)
        if adapter.type() == 'sparkcdc' else none -%}
    {%- if shared -%}
        {{ return(api.Relation.create(
            identifier=shared, schema='global_temp', database=none, type='view')) }}
    {%- endif -%}
    {{ return(api.Relation.create(identifier=identifier, schema=none, database=none, type='view')) }}
{% endmacro %}


{#- The statement that makes `relation` (snapshot_cached_changes_relation) a view of the query
    that follows it: a global one when the relation is in global_temp. -#}
{% macro snapshot_cached_view_statement(relation) %}
    {%- if relation.schema == 'global_temp' -%}
        {{ return('create or replace global temporary view ' ~ relation.identifier ~ ' as') }}
    {%- endif -%}
    {{ return('create or replace temporary view ' ~ relation ~ ' as') }}
{% endmacro %}


{#- Cache `relation` as the result of `query` now (eager): `cache table ... as` for a temporary
    view; a global one is created, then cached. -#}
{% macro snapshot_cache_relation_as(name, relation, query) %}
    {%- if relation.schema == 'global_temp' -%}
        {%- call statement(name ~ '_view') -%}
            {{ spark_cdc.snapshot_cached_view_statement(relation) }}
            {{ query }}
        {%- endcall -%}
        {%- call statement(name) -%}
            cache table {{ relation }}
        {%- endcall -%}
    {%- else -%}
        {%- call statement(name) -%}
            cache table {{ relation }} as
            {{ query }}
        {%- endcall -%}
    {%- endif -%}
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
                and not {{ spark_cdc.snapshot_is_deleted_test(columns.dbt_is_deleted) }}
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
    {%- set changes = spark_cdc.snapshot_cached_changes_relation(target_relation) -%}
    {%- call statement('snapshot_no_changes') -%}
        {{ spark_cdc.snapshot_cached_view_statement(changes) }}
        select 'insert' as dbt_change_type where false
    {%- endcall -%}
{% endmacro %}


{#- The latest version of a Delta table. -#}
{% macro snapshot_table_version(relation) %}
    {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
    {{ return(history.rows[0][0]) }}
{% endmacro %}


{#- Step 3 of the flow (snapshot_flow.sql): the keys this run changes, as a dict: `changed_keys`
    (their count), `from_source` (how many have a source row), `without_open` (how many have no
    open row), `closed_since` (the earliest updated_at of those, as text) and `version` (the
    table's version the join read), plus `keys` (the cached relation), or `changed_keys` 0 alone
    when a timestamp-strategy run's digests match (snapshot_unchanged_sql: no join at all).
    The join (stage 1, snapshot_changed_keys_sql) is cached (CACHE TABLE is eager: the query is
    read here and never again in this run) and checks the query's keys in the same pass: a NULL
    or duplicate key fails this statement, naming the key. It reads the table as of its version
    now, so the MERGE's commit leaves the cached rows as they are. -#}
{% macro snapshot_find_changed_keys(strategy, source_sql, target_relation, plan) %}
    {%- if spark_cdc.snapshot_compares_digests()
        and spark_cdc.snapshot_source_unchanged(strategy, source_sql, target_relation) -%}
        {{ return({'changed_keys': 0}) }}
    {%- endif -%}
    {%- set version = spark_cdc.snapshot_table_version(target_relation) -%}
    {%- set keys = spark_cdc.snapshot_cached_changes_relation(target_relation, 'keys') -%}
    {%- set check_keys = config.get('snapshot_check_unique_keys', true) -%}
    {%- do spark_cdc.snapshot_cache_relation_as('snapshot_cache_changed_keys', keys,
        spark_cdc.snapshot_changed_keys_sql(
            strategy, source_sql, target_relation, plan, version, check_keys)) -%}
    {%- set summary = run_query(
        'select count(*), count_if(' ~ plan.has_source ~ '), count_if(not ' ~ plan.has_open ~ '), '
        ~ 'cast(min(case when not ' ~ plan.has_open ~ ' then source_data.' ~ plan.columns.dbt_updated_at
        ~ ' end) as string) from ' ~ keys).rows[0] -%}
    {{ return({
        'keys': keys, 'version': version, 'changed_keys': summary[0], 'from_source': summary[1],
        'without_open': summary[2], 'closed_since': summary[3]}) }}
{% endmacro %}


{#- Step 4 of the flow: refuse a run whose every change is a delete when its query is empty and
    snapshot_refuses_empty_source (the query is probed for one row only then). -#}
{% macro snapshot_refuse_empty_source(strategy, source_sql, found) %}
    {%- if found.changed_keys > 0 and found.from_source == 0
        and spark_cdc.snapshot_refuses_empty_source(strategy) -%}
        {%- if run_query(spark_cdc.snapshot_source_probe_sql(source_sql)).rows[0][0] == 0 -%}
            {%- do spark_cdc.snapshot_raise_empty_source(strategy) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}


{#- Step 6 of the flow: the change rows of the changed keys (`found`, step 3), cached for the
    MERGE (stage 2, snapshot_change_rows_sql), read from the table's same version. With
    hard_deletes: invalidate the closed rows are read only when a changed key has no open row,
    and only those that ended at or after the earliest updated_at of such keys. -#}
{% macro snapshot_cache_change_rows(strategy, target_relation, plan, found) %}
    {%- set find_last_closed = false -%}
    {%- set closed_since = none -%}
    {%- if strategy.hard_deletes == 'invalidate' -%}
        {%- set find_last_closed = found.without_open > 0 and found.closed_since is not none -%}
        {%- set closed_since = found.closed_since -%}
    {%- endif -%}
    {%- do spark_cdc.snapshot_cache_relation_as('snapshot_cache_changes',
        spark_cdc.snapshot_cached_changes_relation(target_relation),
        spark_cdc.snapshot_change_rows_sql(
            strategy, target_relation, plan, found['keys'], found.version, find_last_closed, closed_since)) -%}
{% endmacro %}


{#- Step 3 of the flow keeps how many keys the run changes (0 when the digests match) as a named
    result, for step 7 (is there anything to merge?) and snapshot_run_merged (did this run merge?).
    A changed key always has a change row (stage 2 keeps each row of stage 1 and gives it the
    change of the branch whose condition stage 1 matched), so no count of the change rows is
    needed. -#}
{% macro snapshot_keep_change_count(changed_keys) %}
    {%- do store_raw_result(
        'snapshot_change_count', message='changed keys', code='OK', rows_affected=changed_keys) -%}
{% endmacro %}


{#- Step 7 of the flow: the count step 3 kept (kept again for snapshot_run_merged), or, when none
    was kept, the cached change rows counted. -#}
{% macro snapshot_count_changes(changes) %}
    {%- set kept = load_result('snapshot_change_count') -%}
    {%- if kept is none -%}
        {%- set kept_count = run_query('select count(*) from ' ~ changes).rows[0][0] -%}
    {%- else -%}
        {%- set kept_count = kept.response.rows_affected -%}
    {%- endif -%}
    {%- do spark_cdc.snapshot_keep_change_count(kept_count) -%}
    {{ return(kept_count) }}
{% endmacro %}


{#- Step 8 of the flow: drop the staging view (as dbt-spark 1.11.0's spark__post_snapshot) and
    this invocation's cached relations (dropping a cached temporary view drops its cached rows). -#}
{% macro snapshot_clean_up(staging_relation, target_relation) %}
    {%- do adapter.drop_relation(staging_relation) -%}
    {%- if spark_cdc.snapshot_caches_changes() -%}
        {%- for part in ('changes', 'keys') -%}
            {%- call statement('snapshot_drop_' ~ part) -%}
                drop view if exists {{ spark_cdc.snapshot_cached_changes_relation(target_relation, part) }}
            {%- endcall -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{#- Whether this run merged into the snapshot table: with cached changes, when it counted some
    (step 7); otherwise always (the MERGE reads the staging view). Iceberg and Hudi tables are not
    Delta tables: never. -#}
{% macro snapshot_run_merged() %}
    {%- if (config.get('file_format') or '') | lower != 'delta' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set kept = load_result('snapshot_change_count') -%}
    {{ return(kept is none or kept.response.rows_affected > 0) }}
{% endmacro %}
