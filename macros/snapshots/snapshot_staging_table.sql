{#- The names and branches shared by both stages of the change rows: the key helper columns,
    the source's column names, and per kind of change ('insert', 'update', 'delete') the
    condition that makes a key produce it and the values of the row it produces. -#}
{% macro snapshot_change_plan(strategy, source_sql, target_relation) -%}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {%- set hard_deletes = strategy.hard_deletes -%}
    {%- set new_record = hard_deletes == 'new_record' -%}
    {%- set now = spark_cdc.snapshot_processing_time() -%}

    {%- set target_columns = adapter.get_columns_in_relation(target_relation) -%}
    {%- set target_names = target_columns | map(attribute='name') | map('lower') | list -%}
    {%- set valid_from_type = spark_cdc.snapshot_column_type(target_columns, columns.dbt_valid_from) -%}
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
    {#- [spark_cdc] dbt_is_deleted read as dbt's string or a boolean, written in the table's type -#}
    {%- set is_deleted = spark_cdc.snapshot_is_deleted_test('snapshotted_data.' ~ columns.dbt_is_deleted) -%}
    {%- set not_deleted_flag = spark_cdc.snapshot_deleted_flag(false, target_columns) -%}
    {%- set stored_flag = 'coalesce(snapshotted_data.' ~ columns.dbt_is_deleted ~ ', '
        ~ not_deleted_flag ~ ')' -%}

    {%- set has_source = '(' ~ unique_key_is_not_null(strategy.unique_key, "source_data") | trim ~ ')' -%}
    {%- set has_open = '(' ~ unique_key_is_not_null(strategy.unique_key, "snapshotted_data") | trim ~ ')' -%}
    {%- set changed = '(' ~ strategy.row_changed ~ (' or ' ~ is_deleted if new_record else '') ~ ')' -%}
    {%- set source_values = {} -%}
    {%- set deleted_values = {} -%}
    {%- for name in source_names -%}
        {%- do source_values.update({name: 'source_data.' ~ adapter.quote(name)}) -%}
        {%- set deleted_side = 'snapshotted_data.' if name | lower in target_names else 'source_data.' -%}
        {%- do deleted_values.update({name: deleted_side ~ adapter.quote(name)}) -%}
    {%- endfor -%}
    {%- set branches = [] -%}

    {#- insertions: a new version's dbt_scd_id is the strategy's, computed on the change rows only
        (null here), unless the version was moved to a later start -#}
    {%- do branches.append({
        'when': has_source ~ ' and (not ' ~ has_open ~ ' or ' ~ changed ~ ')',
        'type': 'insert', 'values': source_values,
        'updated_at': updated_at, 'valid_from': version_start, 'valid_to': 'source_data.' ~ columns.dbt_valid_to,
        'scd_id': 'case when ' ~ moved ~ ' then ' ~ snapshot_hash_arguments(moved_scd_args) ~ ' end',
        'is_deleted': not_deleted_flag, 'opened': true}) -%}
    {#- updates -#}
    {%- do branches.append({
        'when': has_source ~ ' and ' ~ has_open ~ ' and ' ~ changed,
        'type': 'update', 'values': source_values,
        'updated_at': updated_at, 'valid_from': update_start, 'valid_to': update_start,
        'scd_id': 'snapshotted_data.' ~ columns.dbt_scd_id, 'is_deleted': stored_flag, 'opened': false}) -%}
    {%- if hard_deletes in ('invalidate', 'new_record') -%}
        {#- deletes: an open deletion row (new_record) stays open while the key is absent -#}
        {%- do branches.append({
            'when': has_open ~ ' and not ' ~ has_source ~ (' and not ' ~ is_deleted if new_record else ''),
            'type': 'delete', 'values': source_values,
            'updated_at': delete_time, 'valid_from': delete_time, 'valid_to': delete_time,
            'scd_id': 'snapshotted_data.' ~ columns.dbt_scd_id, 'is_deleted': stored_flag, 'opened': false}) -%}
    {%- endif -%}
    {%- if new_record -%}
        {#- deletion_records -#}
        {%- do branches.append({
            'when': has_open ~ ' and not ' ~ has_source ~ ' and not ' ~ is_deleted,
            'type': 'insert', 'values': deleted_values,
            'updated_at': delete_time, 'valid_from': delete_time, 'valid_to': 'snapshotted_data.' ~ columns.dbt_valid_to,
            'scd_id': snapshot_hash_arguments(['snapshotted_data.' ~ columns.dbt_scd_id, now]),
            'is_deleted': spark_cdc.snapshot_deleted_flag(true, target_columns), 'opened': true}) -%}
    {%- endif -%}
    {{ return({
        'columns': columns, 'now': now, 'key_names': key_names, 'source_names': source_names,
        'high': spark_cdc.snapshot_high_end_value(valid_from_type), 'branches': branches,
        'valid_from_type': valid_from_type or 'timestamp',
        'has_source': has_source, 'has_open': has_open,
        'open_row_columns': spark_cdc.snapshot_open_row_columns(
            strategy, target_columns, source_names, columns)}) }}
{%- endmacro %}


{#- The snapshot table's columns that the change rows read from an open row
    (`snapshotted_data.<name>` in the branches of snapshot_change_plan), so that stage 1 carries
    only them through its join: the start and dbt_scd_id of the open version (every branch);
    with hard_deletes: new_record also its end, dbt_is_deleted and the source's columns (a
    deletion row copies them); and what the strategy's row_changed compares: the start
    (timestamp), the check columns (check; `all`: every column of the query), every column (any
    other strategy, whose comparison this package cannot know). In the table's own spelling. -#}
{% macro snapshot_open_row_columns(strategy, target_columns, source_names, columns) -%}
    {%- set read = [columns.dbt_valid_from, columns.dbt_scd_id] -%}
    {%- if strategy.hard_deletes == 'new_record' -%}
        {%- do read.extend([columns.dbt_valid_to, columns.dbt_is_deleted] + source_names) -%}
    {%- endif -%}
    {%- set strategy_name = config.get('strategy') -%}
    {%- set check_cols = config.get('check_cols') -%}
    {%- if strategy_name == 'check' and check_cols == 'all' -%}
        {%- do read.extend(source_names) -%}
    {%- elif strategy_name == 'check' -%}
        {%- do read.extend([check_cols] if check_cols is string else check_cols or []) -%}
    {%- elif strategy_name != 'timestamp' -%}
        {{ return(target_columns | map(attribute='name') | list) }}
    {%- endif -%}
    {%- set wanted = [] -%}
    {%- for name in read -%}{%- do wanted.append(name | replace('`', '') | lower) -%}{%- endfor -%}
    {%- set names = [] -%}
    {%- for column in target_columns if column.name | lower in wanted -%}
        {%- do names.append(column.name) -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}


{#- The snapshot table as the change rows read it: as of `version` when given (the version read
    at the start of the run, so the MERGE's commit does not make Spark re-plan what was cached
    from it). -#}
{% macro snapshot_target_as_of(target_relation, version=none) -%}
    {{ target_relation }}{{ ' version as of ' ~ version if version is not none else '' }}
{%- endmacro %}


{#- Stage 1 of the change rows: each key's source row and open row side by side (a full outer
    join), kept only for the keys with a change, each side as a struct (`source_data`,
    `snapshotted_data`) so that stage 2 reads them with the same names.
    `check_keys`: the source's key check in the same query (a window over the keys, which the join
    then uses as its partitioning): a NULL or duplicate key is kept too, and its column
    `dbt_snapshot_key_check` raises the error that names it. -#}
{% macro snapshot_changed_keys_sql(
    strategy, source_sql, target_relation, plan, target_version=none, check_keys=false
) -%}
    {%- set keys = spark_cdc.snapshot_key_list(strategy.unique_key) -%}
    {%- if check_keys -%}
        {%- set key_values = [] -%}
        {%- for name in plan.key_names -%}{%- do key_values.append('source_data.' ~ name) -%}{%- endfor -%}
        {%- set key_rows = 'source_data.dbt_snapshot_key_rows' -%}
        {%- set check = spark_cdc.snapshot_key_check(keys, key_values, key_rows) -%}
        {#- a row of the join without a source row has no key_rows: never a fault -#}
        {%- set fault = '(source_data.dbt_snapshot_key_rows is not null and ' ~ check.fails ~ ')' -%}
    {%- endif -%}
    with snapshot_query as (

        {{ source_sql }}

    ),

    snapshotted_data as (

        select
            {% for name in plan.open_row_columns %}{{ adapter.quote(name) }}, {% endfor -%}
            {{ unique_key_fields(strategy.unique_key) }}
        from {{ spark_cdc.snapshot_target_as_of(target_relation, target_version) }}
        where {{ spark_cdc.snapshot_row_is_open('', plan.columns) }}

    ),

    source_data as (

        {%- if check_keys %}
        {#- the window partitioned by the join's own key columns: one shuffle of the query's
            rows serves both (by the key expressions, the join would shuffle them again) #}
        select
            *,
            count(*) over (partition by {{ plan.key_names | join(', ') }}) as dbt_snapshot_key_rows
        from (
        {%- endif %}
        select
            *,
            {{ unique_key_fields(strategy.unique_key) }},
            {{ strategy.updated_at }} as {{ plan.columns.dbt_updated_at }},
            {{ get_dbt_valid_to_current(strategy, plan.columns) }}
        from snapshot_query
        {%- if check_keys %}
        ) as keyed_rows
        {%- endif %}

    )

    select
        struct(source_data.*) as source_data,
        struct(snapshotted_data.*) as snapshotted_data
        {%- if check_keys %},
        case when {{ fault }} then {{ check.error }} end as dbt_snapshot_key_check
        {%- endif %}
    from source_data
    full outer join snapshotted_data
        on {{ unique_key_join_on(strategy.unique_key, "snapshotted_data", "source_data") }}
    where {% for branch in plan.branches %}({{ branch.when }}){{ ' or ' if not loop.last }}{% endfor %}
        {%- if check_keys %}
        or {{ fault }}
        {%- endif %}
{%- endmacro %}


{#- Stage 2 of the change rows: the rows of each changed key (`changed_keys`, stage 1). -#}
{#- `find_last_closed`: false when no changed key lacks an open row (known from the cached stage 1):
    the closed rows are then not read at all. `closed_since`: the earliest updated_at of those keys
    (text), when known: a close before it cannot move any of their versions (a version moves only
    when its updated_at is not after the key's last close), so only closed rows ending at or after
    it are read, and Delta skips the files of older history. -#}
{% macro snapshot_change_rows_sql(
    strategy, target_relation, plan, changed_keys,
    target_version=none, find_last_closed=true, closed_since=none
) -%}
    {%- set columns = plan.columns -%}
    {%- set meta = spark_cdc.snapshot_metadata_column_names() -%}
    {%- set new_record = strategy.hard_deletes == 'new_record' -%}
    {%- set process_id = spark_cdc.snapshot_process_id() -%}
    {%- set output = ['dbt_change_type'] + plan.source_names + [
        columns.dbt_updated_at, columns.dbt_valid_from, columns.dbt_valid_to, columns.dbt_scd_id]
        + ([columns.dbt_is_deleted] if new_record else [])
        + [meta.insert_process_id, meta.inserted_at, meta.close_process_id, meta.closed_at, meta.valid_to_high] -%}

    {#- nested queries, not CTEs: Spark does not use a cached `changed_keys` that a CTE reads -#}
    select
        {%- for name in output %}
        {%- if name == columns.dbt_scd_id %}
        {#- the strategy's dbt_scd_id of a new version, from the source's own columns (named as
            in the source here): hashed for the change rows only #}
        coalesce(
            {{ adapter.quote(name) }},
            case when dbt_change_type = 'insert' then {{ strategy.scd_id }} end
        ) as {{ adapter.quote(name) }}{{ ',' if not loop.last }}
        {%- else %}
        {{ adapter.quote(name) }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from (
        select inline(changes)
        from (
            select filter(array(
                {%- for branch in plan.branches %}
                case when {{ branch.when }} then named_struct(
                    'dbt_change_type', '{{ branch.type }}',
                    {%- for name in plan.source_names %}
                    '{{ name | replace("'", "\\'") }}', {{ branch['values'][name] }},
                    {%- endfor %}
                    '{{ columns.dbt_updated_at }}', {{ branch.updated_at }},
                    '{{ columns.dbt_valid_from }}', {{ branch.valid_from }},
                    '{{ columns.dbt_valid_to }}', {{ branch.valid_to }},
                    '{{ columns.dbt_scd_id }}', {{ branch.scd_id }},
                    {%- if new_record %}
                    '{{ columns.dbt_is_deleted }}', {{ branch.is_deleted }},
                    {%- endif %}
                    '{{ meta.insert_process_id }}', {{ process_id if branch.opened else 'cast(null as string)' }},
                    '{{ meta.inserted_at }}', {{ plan.now if branch.opened else 'cast(null as timestamp)' }},
                    '{{ meta.close_process_id }}', {{ 'cast(null as string)' if branch.opened else process_id }},
                    '{{ meta.closed_at }}', {{ 'cast(null as timestamp)' if branch.opened else plan.now }},
                    '{{ meta.valid_to_high }}', {{ plan.high if branch.opened else branch.valid_to }}
                ) end{{ ',' if not loop.last }}
                {%- endfor %}
            ), change -> change is not null) as changes
            from {{ changed_keys }}
            {% if strategy.hard_deletes == 'invalidate' -%}
            {#- [spark_cdc] the last close of the changed keys without an open row #}
            left outer join (
                {%- if not find_last_closed %}
                select
                    {% for key in plan.key_names %}source_data.{{ key }} as {{ key }}, {% endfor -%}
                    cast(null as timestamp) as dbt_snapshot_closed_at
                from {{ changed_keys }}
                where false
                {%- else %}
                select
                    {% for key in plan.key_names %}closed_rows.{{ key }}, {% endfor -%}
                    max(closed_rows.{{ columns.dbt_valid_to }}) as dbt_snapshot_closed_at
                from (
                    select {{ unique_key_fields(strategy.unique_key) }}, {{ columns.dbt_valid_to }}
                    from {{ spark_cdc.snapshot_target_as_of(target_relation, target_version) }}
                    where not {{ spark_cdc.snapshot_row_is_open('', columns) }}
                    {%- if closed_since is not none %}
                        and {{ columns.dbt_valid_to }} >= cast('{{ closed_since }}' as {{ plan.valid_from_type }})
                    {%- endif %}
                ) as closed_rows
                {#- With closed_since, every key closed since then (Delta skips the files of
                    older closes), not only the returning keys: a second reference to the cached
                    changed keys would be computed again, whole (Spark finds a cached query that
                    has CTEs, as a snapshot query may, for one reference per statement only). #}
                {%- if closed_since is none %}
                left semi join (
                    select {% for key in plan.key_names %}source_data.{{ key }} as {{ key }}{{ ', ' if not loop.last }}{% endfor %}
                    from {{ changed_keys }}
                    where not {{ plan.has_open }}
                ) as returning_keys
                    on {{ unique_key_join_on(strategy.unique_key, "returning_keys", "closed_rows") }}
                {%- endif %}
                group by {% for key in plan.key_names %}{{ loop.index }}{{ ', ' if not loop.last }}{% endfor %}
                {%- endif %}
            ) as last_closed
                on {{ unique_key_join_on(strategy.unique_key, "last_closed", "source_data") }}
            {%- endif %}
        ) as change_rows
    ) as change_row_values
{%- endmacro %}


{#-
    The change rows of a snapshot run: the rows to insert ('insert') and the open rows to close
    ('update', 'delete'), read by spark__snapshot_merge_sql. One query (stage 1 as a CTE); a
    cached run computes the two stages as two cached relations instead (snapshot_flow.sql).

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
      case-insensitively (dbt-adapters#1401); dbt_is_deleted is dbt's 'True' / 'False', or a
      boolean in a table built by an earlier spark_cdc (snapshot_deleted_flag.sql);
    - the output lists its columns: the dbt_unique_key helper columns are not part of it, so they
      cannot leak into the snapshot table (dbt-adapters#2101);
    - one join of the source with the open rows (full outer) finds every changed key, instead of
      one join per kind of change; the change rows and their dbt_scd_id hashes are computed for
      those keys only, and the last close of a key (hard_deletes: invalidate) only for the
      changed keys that have no open row.
-#}
{% macro snapshot_changes_sql(strategy, source_sql, target_relation, plan=none) -%}
    {%- set plan = plan or spark_cdc.snapshot_change_plan(strategy, source_sql, target_relation) -%}
    with changed_keys as (

        {{ spark_cdc.snapshot_changed_keys_sql(strategy, source_sql, target_relation, plan) | indent(8) }}

    )

    {{ spark_cdc.snapshot_change_rows_sql(strategy, target_relation, plan, 'changed_keys') }}
{%- endmacro %}

{#-
    As dbt-spark 1.11.0's spark_build_snapshot_staging_table, except:
    - [spark_cdc] the staging view is a temporary view of the run's session, named per
      invocation (`<snapshot>__dbt_tmp_<id>`): no metastore write, read or drop for it (Spark's
      `describe` and `drop view` read temporary views too), and two concurrent runs of one
      snapshot never see each other's view; the MERGEs themselves are serialized by Delta's
      optimistic concurrency control (a conflicting second commit fails with a
      ConcurrentAppendException and changes nothing);
    - the guard rails (duplicate keys, an empty query with hard deletes, a text updated_at) run
      in spark__snapshot_staging_table, which dbt-spark's own version of this macro calls too:
      a project that installs spark_cdc as a package gets them through its dispatch order, and
      this per-invocation view name with a one-line macro of its own (docs/use-in-your-project.md).
-#}
{% macro spark_build_snapshot_staging_table(strategy, sql, target_relation) %}
    {%- set run_suffix = (invocation_id | replace('-', ''))[:16] -%}
    {%- set tmp_identifier = target_relation.identifier ~ '__dbt_tmp_' ~ run_suffix -%}

    {#- unqualified: a temporary view belongs to no schema -#}
    {%- set tmp_relation = api.Relation.create(
        identifier=tmp_identifier, schema=none, database=none, type='view') -%}

    {%- set select = snapshot_staging_table(strategy, sql, target_relation) -%}

    {%- call statement('build_snapshot_staging_relation') -%}
        {{ create_temporary_view(tmp_relation, select) }}
    {%- endcall -%}

    {%- do return(tmp_relation) -%}
{% endmacro %}
