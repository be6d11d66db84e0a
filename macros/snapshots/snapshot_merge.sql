{#-
    Step 7 of the flow (snapshot_flow.sql): the MERGE of the change rows into the snapshot table.

    As dbt-spark 1.11.0's spark__snapshot_merge_sql (the Iceberg `source.identifier` branch kept),
    except:
    - [spark_cdc] closing a row also records the closing process id and processing time, and sets
      the high end date column to the new dbt_valid_to;
    - [spark_cdc] inserts name their columns (insert_cols, quoted) instead of `insert *`, so the
      staging relation's column order does not matter and helper columns can never leak in;
    - [spark_cdc] the open-row test is part of the `on` condition, so Delta skips the files that
      hold closed rows only (the staging never inserts a dbt_scd_id that a closed row has: a new
      version's id is derived from its own start, later than every earlier version's).
    Step 5's helpers follow it: deletion vectors and type widening.
-#}
{% macro snapshot_merge_statement(target, source, insert_cols) -%}
    {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}
    {%- set meta = spark_cdc.snapshot_metadata_column_names() -%}
    merge into {{ target }} as DBT_INTERNAL_DEST
    {%- if target.is_iceberg %}
    {#- create view only supports a name (no catalog, or schema) #}
    using {{ source.identifier }} as DBT_INTERNAL_SOURCE
    {%- else %}
    using {{ source }} as DBT_INTERNAL_SOURCE
    {%- endif %}
    on DBT_INTERNAL_SOURCE.{{ columns.dbt_scd_id }} = DBT_INTERNAL_DEST.{{ columns.dbt_scd_id }}
        and {{ spark_cdc.snapshot_row_is_open('DBT_INTERNAL_DEST', columns) }}
    when matched
        and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update set
            {{ columns.dbt_valid_to }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }},
            {{ meta.close_process_id }} = DBT_INTERNAL_SOURCE.{{ meta.close_process_id }},
            {{ meta.closed_at }} = DBT_INTERNAL_SOURCE.{{ meta.closed_at }},
            {{ meta.valid_to_high }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }}
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert ({{ insert_cols | join(', ') }})
        values (
            {%- for column in insert_cols %}
            DBT_INTERNAL_SOURCE.{{ column }}{{ ',' if not loop.last }}
            {%- endfor %}
        )
{%- endmacro %}


{#- Turn on deletion vectors on a snapshot table that has not got them, once it holds at least
    snapshot_deletion_vectors_min_mb megabytes (default 32; config snapshot_deletion_vectors: false
    leaves the table as it is). Below that size a MERGE that rewrites the files it touches costs
    less than one that writes deletion vectors (measured: 1,000 to 250,000 rows, 0.7-1.3 s less
    per merging run; the same at 500,000 rows, 31 MB; docs/benchmarks.md). A one-time change of
    the table (a Delta protocol upgrade: readers need Delta 2.3 or later); tables created before
    it are upgraded by their first merging run at that size, and a table that has them keeps them.
    Read from Delta's own table detail (metadata only, no scan). -#}
{% macro snapshot_ensure_deletion_vectors(target) %}
    {%- if not config.get('snapshot_deletion_vectors', true) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set min_mb = spark_cdc.snapshot_deletion_vectors_min_mb() -%}
    {#- the property alone first (a table that has them, the daily case, needs no size: Delta's
        detail is about ten times slower); an absent property reads as a sentence, not 'true' -#}
    {%- set enabled = run_query(
        "show tblproperties " ~ target ~ " ('delta.enableDeletionVectors')").rows -%}
    {%- if enabled and (enabled[0][1] | string | lower) == 'true' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set detail = run_query('describe detail ' ~ target).rows[0] -%}
    {%- if (detail['sizeInBytes'] or 0) >= min_mb * 1024 * 1024 -%}
        {%- call statement('snapshot_enable_deletion_vectors') -%}
            alter table {{ target }} set tblproperties ('delta.enableDeletionVectors' = 'true')
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{#- The size from which a snapshot table gets deletion vectors, in megabytes (config
    snapshot_deletion_vectors_min_mb, default 32; 0: from its first merging run); anything but a
    number of 0 or more stops the run before it writes. -#}
{% macro snapshot_deletion_vectors_min_mb() %}
    {%- set value = config.get('snapshot_deletion_vectors_min_mb', 32) -%}
    {%- set number = value | string | float(-1) -%}
    {%- if value is none or value is boolean or number < 0 -%}
        {%- do exceptions.raise_compiler_error(
            'snapshot_deletion_vectors_min_mb must be a number of megabytes (0 or more), not '
            ~ value) -%}
    {%- endif -%}
    {{ return(number) }}
{% endmacro %}


{#- Widen the snapshot table's columns whose type the source widened (int -> bigint, float ->
    double, a decimal with more digits, ...), with Delta's type widening, once every guard of the
    run has passed and before its MERGE (a refused run leaves the table at its version): the new
    values are then stored as they are (an int column would reject 3,000,000,000), and the rows
    already there keep their values and versions. Other type changes are left to the MERGE's
    own casts. -#}
{% macro snapshot_widen_columns(source_sql, target) %}
    {%- set current = {} -%}
    {%- for row in run_query('describe table ' ~ target).rows -%}
        {%- if row[0] and not row[0].startswith('#') -%}
            {%- do current.update({row[0] | lower: row[1] | lower}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set widened = [] -%}
    {%- for row in run_query('describe query ' ~ source_sql).rows -%}
        {%- set before = current.get(row[0] | lower) -%}
        {%- if before and spark_cdc.snapshot_type_widens(before, row[1] | lower) -%}
            {%- do widened.append((row[0], row[1] | lower)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if widened -%}
        {%- call statement('snapshot_enable_type_widening') -%}
            alter table {{ target }} set tblproperties ('delta.enableTypeWidening' = 'true')
        {%- endcall -%}
        {%- for name, type in widened -%}
            {%- call statement('snapshot_widen_' ~ loop.index) -%}
                alter table {{ target }} alter column {{ adapter.quote(name) }} type {{ type }}
            {%- endcall -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{#- Whether Delta's type widening turns a `before` column into an `after` one (Spark SQL type
    names, lower case): integers to wider integers or to double, float to double, a decimal to
    one with as many integer digits and as many decimals or more. -#}
{% macro snapshot_type_widens(before, after) %}
    {%- set integers = ['tinyint', 'smallint', 'int', 'bigint'] -%}
    {%- if before == after -%}
        {{ return(false) }}
    {%- elif before in integers and after in integers -%}
        {{ return(integers.index(after) > integers.index(before)) }}
    {%- elif after == 'double' -%}
        {{ return(before in ['tinyint', 'smallint', 'int', 'float']) }}
    {%- elif before.startswith('decimal(') and after.startswith('decimal(') -%}
        {%- set old = before[8:-1].split(',') | map('int') | list -%}
        {%- set new = after[8:-1].split(',') | map('int') | list -%}
        {{ return(new[1] >= old[1] and new[0] - new[1] >= old[0] - old[1]) }}
    {%- endif -%}
    {{ return(false) }}
{% endmacro %}
