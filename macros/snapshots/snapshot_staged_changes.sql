{#-
    The Delta table that holds a snapshot run's change rows (spark__snapshot_staging_table writes
    it, spark__snapshot_merge_sql reads it, spark__post_snapshot drops it).
-#}

{#- Whether this snapshot stages its changes in a Delta table (file_format delta). -#}
{% macro snapshot_stages_in_table() %}
    {{ return(execute and (config.get('file_format') or '') | lower == 'delta') }}
{% endmacro %}


{#- The staged changes of this invocation: `<snapshot>__dbt_stage_<id>` beside the snapshot, one
    per invocation, so that two runs of one snapshot at once never share it. -#}
{% macro snapshot_staged_relation(target_relation) %}
    {%- set run_suffix = (invocation_id | replace('-', ''))[:16] -%}
    {{ return(api.Relation.create(
        identifier=target_relation.identifier ~ '__dbt_stage_' ~ run_suffix,
        schema=target_relation.schema, database=none, type='table')) }}
{% endmacro %}


{#-
    As dbt-spark 1.11.0's spark__post_snapshot (drops the staging view), and [spark_cdc] drops
    this invocation's staged changes table too.
-#}
{% macro spark__post_snapshot(staging_relation) %}
    {%- do adapter.drop_relation(staging_relation) -%}
    {%- if spark_cdc.snapshot_stages_in_table() -%}
        {%- do adapter.drop_relation(spark_cdc.snapshot_staged_relation(this)) -%}
    {%- endif -%}
{% endmacro %}
