{#-
    The staging select of a snapshot run: the rows to insert ('insert') and the open rows to close
    ('update', 'delete'), read by spark__snapshot_merge_sql.

    Follows dbt's default__snapshot_staging_table (dbt-adapters 1.24.5) and keeps its change
    detection (strategy.row_changed) untouched. Departures, marked [spark_cdc] below:
    - operational metadata columns on every row: process id and processing time of the insert or
      of the close, and the high end date (snapshot_metadata.sql);
    - validity windows never overlap: a new version starts at its updated_at, unless that is not
      after the start of the key's open version or, with hard_deletes: invalidate, after the close
      of its last version (a key restored with its old updated_at); then it starts at the
      processing time of this run (or that start/close if later), and its dbt_scd_id is derived
      from that start so it cannot collide with an earlier version. A row closed by a hard delete
      ends at the processing time, or at its own start if that is later;
    - new_record deletion rows copy the source columns of the deleted row, matched by name
      case-insensitively (dbt-adapters#1401), and dbt_is_deleted is a boolean;
    - the output lists its columns: the dbt_unique_key helper columns are not part of it, so they
      cannot leak into the snapshot table (dbt-adapters#2101).
-#}
{% macro spark__snapshot_staging_table(strategy, source_sql, target_relation) -%}
    {#- The guard rails, before anything is written (snapshot_metadata.sql). -#}
    {%- do spark_cdc.snapshot_assert_updated_at_type(strategy, source_sql) -%}
    {%- do spark_cdc.snapshot_assert_source_not_empty(strategy, source_sql) -%}
    {%- do spark_cdc.snapshot_assert_unique_keys(strategy, source_sql) -%}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {%- set meta = spark_cdc.snapshot_metadata_column_names() -%}
    {%- set hard_deletes = strategy.hard_deletes -%}
    {%- set new_record = hard_deletes == 'new_record' -%}
    {%- set now = snapshot_get_time() -%}
    {%- set process_id = spark_cdc.snapshot_process_id() -%}

    {%- set target_columns = adapter.get_columns_in_relation(target_relation) -%}
    {%- set target_names = target_columns | map(attribute='name') | map('lower') | list -%}
    {%- set valid_from_type = spark_cdc.snapshot_column_type(target_columns, columns.dbt_valid_from) -%}
    {%- set high = spark_cdc.snapshot_high_end_value(valid_from_type) -%}
    {%- set source_names = get_columns_in_query(source_sql) -%}
    {%- set key_names = [] -%}
    {%- if strategy.unique_key | is_list -%}
        {%- for key in strategy.unique_key -%}
            {%- do key_names.append('dbt_unique_key_' ~ loop.index) -%}
        {%- endfor -%}
    {%- else -%}
        {%- do key_names.append('dbt_unique_key') -%}
    {%- endif -%}

    {#- [spark_cdc] where the key's previous version starts (open row) or ended (invalidated) -#}
    {%- set floor = 'snapshotted_data.' ~ columns.dbt_valid_from -%}
    {%- if hard_deletes == 'invalidate' -%}
        {%- set floor = 'coalesce(' ~ floor ~ ', last_closed.dbt_snapshot_closed_at)' -%}
    {%- endif -%}
    {%- set updated_at = 'source_data.' ~ columns.dbt_updated_at -%}
    {%- set moved = floor ~ ' is not null and ' ~ updated_at ~ ' <= ' ~ floor -%}
    {%- set moved_start = 'greatest(' ~ now ~ ', ' ~ floor ~ ')' -%}
    {%- set version_start = 'case when ' ~ moved ~ ' then ' ~ moved_start ~ ' else ' ~ updated_at ~ ' end' -%}
    {#- an update always has an open row: its floor is that row's start -#}
    {%- set open_floor = 'snapshotted_data.' ~ columns.dbt_valid_from -%}
    {%- set update_start = 'case when ' ~ updated_at ~ ' <= ' ~ open_floor ~ ' then greatest(' ~ now ~ ', '
        ~ open_floor ~ ') else ' ~ updated_at ~ ' end' -%}
    {%- set moved_scd_args = [] -%}
    {%- for key in key_names -%}{%- do moved_scd_args.append('source_data.' ~ key) -%}{%- endfor -%}
    {%- do moved_scd_args.append(moved_start) -%}
    {%- set delete_time = 'greatest(' ~ now ~ ', snapshotted_data.' ~ columns.dbt_valid_from ~ ')' -%}
    {%- set is_deleted = 'coalesce(snapshotted_data.' ~ columns.dbt_is_deleted ~ ', false)' -%}

    with snapshot_query as (

        {{ source_sql }}

    ),

    snapshotted_data as (

        select *, {{ unique_key_fields(strategy.unique_key) }}
        from {{ target_relation }}
        where {{ spark_cdc.snapshot_row_is_open('', columns) }}

    ),

    {%- if hard_deletes == 'invalidate' %}

    last_closed as (

        select {{ unique_key_fields(strategy.unique_key) }}, max({{ columns.dbt_valid_to }}) as dbt_snapshot_closed_at
        from {{ target_relation }}
        where not {{ spark_cdc.snapshot_row_is_open('', columns) }}
        group by {% for key in key_names %}{{ loop.index }}{{ ', ' if not loop.last }}{% endfor %}

    ),
    {%- endif %}

    insertions_source_data as (

        select
            *,
            {{ unique_key_fields(strategy.unique_key) }},
            {{ strategy.updated_at }} as {{ columns.dbt_updated_at }},
            {{ get_dbt_valid_to_current(strategy, columns) }},
            {{ strategy.scd_id }} as {{ columns.dbt_scd_id }}
        from snapshot_query

    ),

    updates_source_data as (

        select
            *,
            {{ unique_key_fields(strategy.unique_key) }},
            {{ strategy.updated_at }} as {{ columns.dbt_updated_at }}
        from snapshot_query

    ),

    {%- if hard_deletes in ('invalidate', 'new_record') %}

    deletes_source_data as (

        select *, {{ unique_key_fields(strategy.unique_key) }}
        from snapshot_query

    ),
    {%- endif %}

    insertions as (

        select
            'insert' as dbt_change_type,
            {%- for name in source_names %}
            source_data.{{ adapter.quote(name) }},
            {%- endfor %}
            {{ updated_at }},
            {{ version_start }} as {{ columns.dbt_valid_from }},
            source_data.{{ columns.dbt_valid_to }},
            case
                when {{ moved }} then {{ snapshot_hash_arguments(moved_scd_args) }}
                else source_data.{{ columns.dbt_scd_id }}
            end as {{ columns.dbt_scd_id }},
            {%- if new_record %}
            false as {{ columns.dbt_is_deleted }},
            {%- endif %}
            {{ process_id }} as {{ meta.insert_process_id }},
            {{ now }} as {{ meta.inserted_at }},
            cast(null as string) as {{ meta.close_process_id }},
            cast(null as timestamp) as {{ meta.closed_at }},
            {{ high }} as {{ meta.valid_to_high }}
        from insertions_source_data as source_data
        left outer join snapshotted_data
            on {{ unique_key_join_on(strategy.unique_key, "snapshotted_data", "source_data") }}
        {%- if hard_deletes == 'invalidate' %}
        left outer join last_closed
            on {{ unique_key_join_on(strategy.unique_key, "last_closed", "source_data") }}
        {%- endif %}
        where
            {{ unique_key_is_null(strategy.unique_key, "snapshotted_data") }}
            or (
                {{ unique_key_is_not_null(strategy.unique_key, "snapshotted_data") }}
                and ({{ strategy.row_changed }}{% if new_record %} or {{ is_deleted }}{% endif %})
            )

    ),

    updates as (

        select
            'update' as dbt_change_type,
            {%- for name in source_names %}
            source_data.{{ adapter.quote(name) }},
            {%- endfor %}
            {{ updated_at }},
            {{ update_start }} as {{ columns.dbt_valid_from }},
            {{ update_start }} as {{ columns.dbt_valid_to }},
            snapshotted_data.{{ columns.dbt_scd_id }},
            {%- if new_record %}
            {{ is_deleted }} as {{ columns.dbt_is_deleted }},
            {%- endif %}
            cast(null as string) as {{ meta.insert_process_id }},
            cast(null as timestamp) as {{ meta.inserted_at }},
            {{ process_id }} as {{ meta.close_process_id }},
            {{ now }} as {{ meta.closed_at }},
            {{ update_start }} as {{ meta.valid_to_high }}
        from updates_source_data as source_data
        inner join snapshotted_data
            on {{ unique_key_join_on(strategy.unique_key, "snapshotted_data", "source_data") }}
        where ({{ strategy.row_changed }}{% if new_record %} or {{ is_deleted }}{% endif %})

    )

    {%- if hard_deletes in ('invalidate', 'new_record') %},

    deletes as (

        select
            'delete' as dbt_change_type,
            {%- for name in source_names %}
            source_data.{{ adapter.quote(name) }},
            {%- endfor %}
            {{ delete_time }} as {{ columns.dbt_updated_at }},
            {{ delete_time }} as {{ columns.dbt_valid_from }},
            {{ delete_time }} as {{ columns.dbt_valid_to }},
            snapshotted_data.{{ columns.dbt_scd_id }},
            {%- if new_record %}
            {{ is_deleted }} as {{ columns.dbt_is_deleted }},
            {%- endif %}
            cast(null as string) as {{ meta.insert_process_id }},
            cast(null as timestamp) as {{ meta.inserted_at }},
            {{ process_id }} as {{ meta.close_process_id }},
            {{ now }} as {{ meta.closed_at }},
            {{ delete_time }} as {{ meta.valid_to_high }}
        from snapshotted_data
        left outer join deletes_source_data as source_data
            on {{ unique_key_join_on(strategy.unique_key, "snapshotted_data", "source_data") }}
        where {{ unique_key_is_null(strategy.unique_key, "source_data") }}
        {%- if new_record %}
            {#- an open deletion row stays open while the key is absent -#}
            and not {{ is_deleted }}
        {%- endif %}

    )
    {%- endif %}

    {%- if new_record %},

    deletion_records as (

        select
            'insert' as dbt_change_type,
            {%- for name in source_names %}
            {%- if name | lower in target_names %}
            snapshotted_data.{{ adapter.quote(name) }},
            {%- else %}
            source_data.{{ adapter.quote(name) }},
            {%- endif %}
            {%- endfor %}
            {{ delete_time }} as {{ columns.dbt_updated_at }},
            {{ delete_time }} as {{ columns.dbt_valid_from }},
            snapshotted_data.{{ columns.dbt_valid_to }},
            {{ snapshot_hash_arguments(['snapshotted_data.' ~ columns.dbt_scd_id, now]) }} as {{ columns.dbt_scd_id }},
            true as {{ columns.dbt_is_deleted }},
            {{ process_id }} as {{ meta.insert_process_id }},
            {{ now }} as {{ meta.inserted_at }},
            cast(null as string) as {{ meta.close_process_id }},
            cast(null as timestamp) as {{ meta.closed_at }},
            {{ high }} as {{ meta.valid_to_high }}
        from snapshotted_data
        left outer join deletes_source_data as source_data
            on {{ unique_key_join_on(strategy.unique_key, "snapshotted_data", "source_data") }}
        where
            {{ unique_key_is_null(strategy.unique_key, "source_data") }}
            and not {{ is_deleted }}

    )
    {%- endif %}

    select * from insertions
    union all
    select * from updates
    {%- if hard_deletes in ('invalidate', 'new_record') %}
    union all
    select * from deletes
    {%- endif %}
    {%- if new_record %}
    union all
    select * from deletion_records
    {%- endif %}

{%- endmacro %}


{#-
    As dbt-spark 1.11.0's spark_build_snapshot_staging_table, except:
    - [spark_cdc] the staging view is named per invocation (`<snapshot>__dbt_tmp_<id>`), so two
      concurrent runs of one snapshot never replace or drop each other's view; the MERGEs
      themselves are serialized by Delta's optimistic concurrency control (a conflicting second
      commit fails with a ConcurrentAppendException and changes nothing);
    - the guard rails (duplicate keys, an empty query with hard deletes, a text updated_at) run
      in spark__snapshot_staging_table, which dbt-spark's own version of this macro calls too:
      a project that installs spark_cdc as a package gets them through its dispatch order, and
      this per-invocation view name with a one-line macro of its own (README).
-#}
{% macro spark_build_snapshot_staging_table(strategy, sql, target_relation) %}
    {%- set run_suffix = (invocation_id | replace('-', ''))[:16] -%}
    {%- set tmp_identifier = target_relation.identifier ~ '__dbt_tmp_' ~ run_suffix -%}

    {%- if target_relation.is_iceberg -%}
        {#- iceberg catalog does not support create view, but regular spark does -#}
        {%- set tmp_relation = api.Relation.create(
            identifier=tmp_identifier, schema=none, database=none, type='view') -%}
    {%- else -%}
        {%- set tmp_relation = api.Relation.create(
            identifier=tmp_identifier, schema=target_relation.schema, database=none, type='view') -%}
    {%- endif -%}

    {%- set select = snapshot_staging_table(strategy, sql, target_relation) -%}

    {#- a non-temp view, so that its columns can be read with `describe` -#}
    {%- call statement('build_snapshot_staging_relation') -%}
        {{ create_view_as(tmp_relation, select) }}
    {%- endcall -%}

    {%- do return(tmp_relation) -%}
{% endmacro %}
