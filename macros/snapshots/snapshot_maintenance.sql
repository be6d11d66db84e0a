{#-
    Table maintenance of a Delta snapshot table, run by a snapshot run that merged
    (docs/snapshots.md#table-maintenance). Every `snapshot_optimize_every` merging runs (default
    10; 0 turns maintenance off) the run ends with:
    - OPTIMIZE: compacts the small files the daily MERGEs add and rewrites the files whose
      deletion vectors hide more than Delta's ratio of their rows (5% by default);
    - REORG TABLE ... APPLY (PURGE) when `snapshot_purge_deletion_vectors` is true (default
      false): rewrites every file that still has a deletion vector, so that no closed version
      lingers in a data file under its old values;
    - VACUUM ... RETAIN <n> HOURS when `snapshot_vacuum_retain_hours` is set (default: no VACUUM,
      so time travel keeps every version Delta's own retention keeps). Fewer hours than the
      table's `delta.deletedFileRetentionDuration` (Delta's own floor: 168 when unset; the
      snapshot's `tblproperties` config before the table exists) is refused unless
      `snapshot_vacuum_allow_short_retention: true`: a short retention deletes the files that
      RESTORE and time travel need (docs/bad-input-and-recovery.md).
    The count restarts at the table's last OPTIMIZE, REORG, RESTORE or creation; a run that
    merged nothing (no change, or refused) commits nothing and never maintains.
-#}

{#- The maintenance settings of this snapshot, from its config; a value that is not a whole
    number stops the run before it writes anything (the first run's table build and a later
    run's staging read them first, so a typo shows at once). -#}
{% macro snapshot_maintenance_settings(relation=none) %}
    {%- set every = config.get('snapshot_optimize_every', 10) -%}
    {%- set retain = config.get('snapshot_vacuum_retain_hours', none) -%}
    {%- if every is none or every | string | lower in ('false', 'none', '') -%}
        {%- set every = 0 -%}
    {%- endif -%}
    {%- if every | string | int(-1) < 0 -%}
        {%- do exceptions.raise_compiler_error(
            'snapshot_optimize_every must be a whole number of merging runs (0 turns table '
            ~ 'maintenance off), not ' ~ every) -%}
    {%- endif -%}
    {%- if retain is not none and retain | string | int(-1) < 0 -%}
        {%- do exceptions.raise_compiler_error(
            'snapshot_vacuum_retain_hours must be a whole number of hours, not ' ~ retain) -%}
    {%- endif -%}
    {%- set allow_short = (config.get('snapshot_vacuum_allow_short_retention', false)
        | string | lower) == 'true' -%}
    {%- set floor = none if retain is none else spark_cdc.snapshot_retention_floor_hours(relation) -%}
    {%- set short = retain is not none and retain | string | int < floor -%}
    {%- if short and not allow_short -%}
        {%- do exceptions.raise_compiler_error(
            'snapshot_vacuum_retain_hours is ' ~ retain ~ ': fewer than ' ~ floor ~ ' hours (the '
            ~ "table's delta.deletedFileRetentionDuration) would delete the files that RESTORE "
            ~ 'and time travel within that retention need. Keep ' ~ floor ~ ' or more, or set '
            ~ 'snapshot_vacuum_allow_short_retention: true to accept that loss') -%}
    {%- endif -%}
    {#- read here too, so that a bad value stops the first run as well -#}
    {%- do spark_cdc.snapshot_deletion_vectors_min_mb() -%}
    {{ return({
        'every': every | string | int,
        'purge': (config.get('snapshot_purge_deletion_vectors', false) | string | lower) == 'true',
        'retain_hours': none if retain is none else retain | string | int,
        'short_retention': allow_short and short,
    }) }}
{% endmacro %}


{#- The hours of a Delta interval text ('interval 1 week', 'interval 30 days 12 hours'), or none
    when it names no unit. -#}
{% macro delta_interval_hours(text) %}
    {%- set per_unit = {'week': 168, 'day': 24, 'hour': 1, 'minute': 1 / 60, 'second': 1 / 3600} -%}
    {%- set parts = modules.re.findall(
        '(\\d+)\\s*(week|day|hour|minute|second)s?\\b', (text or '') | string | lower) -%}
    {%- if not parts -%}{{ return(none) }}{%- endif -%}
    {%- set total = namespace(hours=0) -%}
    {%- for count, unit in parts -%}
        {%- set total.hours = total.hours + (count | int) * per_unit[unit] -%}
    {%- endfor -%}
    {{ return(total.hours) }}
{% endmacro %}


{#- Delta's floor for a VACUUM of `relation`: its delta.deletedFileRetentionDuration in hours
    (the table's; before the table exists, the snapshot's `tblproperties` config), 168 (Delta's
    default) when unset. -#}
{% macro snapshot_retention_floor_hours(relation=none) %}
    {%- set name = 'delta.deletedFileRetentionDuration' -%}
    {%- set found = namespace(text=none) -%}
    {%- if relation is not none and execute and load_relation(relation) is not none -%}
        {%- set rows = run_query('show tblproperties ' ~ relation ~ " ('" ~ name ~ "')") -%}
        {%- if rows is not none and rows.rows | length > 0 -%}
            {%- set found.text = rows.rows[0][-1] -%}
        {%- endif -%}
    {%- endif -%}
    {%- set hours = spark_cdc.delta_interval_hours(found.text) -%}
    {%- if hours is none -%}
        {%- set configured = config.get('tblproperties', none) -%}
        {%- if configured is mapping -%}
            {%- set hours = spark_cdc.delta_interval_hours(configured.get(name)) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(168 if hours is none else hours) }}
{% endmacro %}


{#- Operations after which the table's files are freshly laid out (the count starts again). -#}
{% macro snapshot_maintenance_boundaries() %}
    {{ return([
        'OPTIMIZE', 'REORG', 'RESTORE', 'CREATE TABLE AS SELECT', 'CREATE OR REPLACE TABLE AS SELECT',
        'REPLACE TABLE AS SELECT', 'CREATE TABLE', 'CREATE OR REPLACE TABLE', 'REPLACE TABLE',
    ]) }}
{% endmacro %}


{#- Whether `every` MERGEs have been committed since the last boundary: the table's latest
    commits, newest first (operations other than MERGE and the boundaries, such as a property
    or a column change, neither count nor stop the count). -#}
{% macro snapshot_maintenance_due(relation, every) %}
    {%- set history = run_query('describe history ' ~ relation ~ ' limit ' ~ (2 * every + 10)) -%}
    {%- set merges = [] -%}
    {%- for row in history.rows -%}
        {%- set operation = row['operation'] | upper -%}
        {%- if operation in spark_cdc.snapshot_maintenance_boundaries() -%}
            {{ return(merges | length >= every) }}
        {%- elif operation == 'MERGE' -%}
            {%- do merges.append(row['version']) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(merges | length >= every) }}
{% endmacro %}


{#- Maintain the snapshot table when due (see the top of this file); whether it did. -#}
{% macro snapshot_maintain(relation, settings) %}
    {%- if settings.every == 0 or not spark_cdc.snapshot_maintenance_due(relation, settings.every) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- call statement('snapshot_optimize') -%}
        optimize {{ relation }}
    {%- endcall -%}
    {%- if settings.purge -%}
        {%- call statement('snapshot_purge_deletion_vectors') -%}
            reorg table {{ relation }} apply (purge)
        {%- endcall -%}
    {%- endif -%}
    {%- if settings.retain_hours is not none -%}
        {%- if settings.short_retention -%}
            {#- accepted by the snapshot's config: Delta's own check is lifted for this statement -#}
            {%- call statement('snapshot_allow_short_retention') -%}
                set spark.databricks.delta.retentionDurationCheck.enabled = false
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('snapshot_vacuum') -%}
            vacuum {{ relation }} retain {{ settings.retain_hours }} hours
        {%- endcall -%}
        {%- if settings.short_retention -%}
            {%- call statement('snapshot_restore_retention_check') -%}
                reset spark.databricks.delta.retentionDurationCheck.enabled
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(true) }}
{% endmacro %}
