{#-
    The sparkcdc adapter's incremental materialization: dbt-spark 1.11's, with one difference.
    When a Python model runs in this process (methods session and connect) and adds to a table
    that exists, dbt-spark writes the model's result as a table `<model>__dbt_tmp`, reads it back
    in the insert or MERGE and drops it, because its Python models may run on another session (a
    Databricks cluster) whose temporary views the MERGE could not see. Here the model runs on its
    dbt connection's own session, so its result becomes a temporary view of that session and the
    insert or MERGE reads the model's DataFrame directly: one Delta write per run instead of two,
    and no metastore table created and dropped. Everything else (the first build, a full
    refresh, SQL models, on_schema_change, the strategies, grants, docs, hooks) is dbt-spark's,
    built from dbt-spark's own macros. A Python model whose run adds nothing says so
    (spark_cdc.core.dbt_context.nothing_to_write): then no write runs at all.
-#}
{% materialization incremental, adapter='sparkcdc', supported_languages=['sql', 'python'] -%}
    {%- set file_format = dbt_spark_validate_get_file_format(
        config.get('file_format', default='parquet')) -%}
    {%- set strategy = dbt_spark_validate_get_incremental_strategy(
        config.get('incremental_strategy') or 'append', file_format) -%}
    {%- set unique_key = config.get('unique_key', none) -%}
    {%- set partition_by = config.get('partition_by', none) -%}
    {%- set language = model['language'] -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(
        config.get('on_schema_change'), default='ignore') -%}
    {%- set incremental_predicates = config.get('predicates', none)
        or config.get('incremental_predicates', none) -%}
    {%- set full_refresh_mode = should_full_refresh() -%}
    {%- set target_relation = this -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set result_as_view = sparkcdc_python_result_as_view() -%}
    {%- set tmp_relation = this.incorporate(path={"identifier": this.identifier ~ '__dbt_tmp'}) -%}
    {%- if language == 'sql' or result_as_view -%}
        {#- a temporary view: no database, no schema -#}
        {%- set tmp_relation = tmp_relation.include(database=false, schema=false) -%}
    {%- endif -%}

    {%- if strategy in ['insert_overwrite', 'microbatch'] and partition_by -%}
        {%- call statement() -%}
            set spark.sql.sources.partitionOverwriteMode = DYNAMIC
        {%- endcall -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}

    {%- if existing_relation is none or existing_relation.is_view or full_refresh_mode -%}
        {#- the table is (re)built; Delta replaces a Delta table in place, the rest is dropped -#}
        {%- if existing_relation is not none
            and not (file_format == 'delta' and existing_relation.is_delta) -%}
            {%- do adapter.drop_relation(existing_relation) -%}
        {%- endif -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- do persist_constraints(target_relation, model) -%}
    {%- else -%}
        {%- if result_as_view -%}
            {%- call statement('create_tmp_relation', language='python') -%}
                {{ sparkcdc_py_write_temp_view(compiled_code, tmp_relation) }}
            {%- endcall -%}
        {%- else -%}
            {%- call statement('create_tmp_relation', language=language) -%}
                {{ create_table_as(True, tmp_relation, compiled_code, language) }}
            {%- endcall -%}
        {%- endif -%}
        {%- if result_as_view and sparkcdc_nothing_to_write(target_relation) -%}
            {#- the model said its run adds nothing: no write, no empty Delta commit -#}
            {%- call statement('main') -%} select 1 as nothing_to_write {%- endcall -%}
        {%- else -%}
            {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
            {%- call statement('main') -%}
                {{ dbt_spark_get_incremental_sql(
                    strategy, tmp_relation, target_relation, existing_relation, unique_key,
                    incremental_predicates) }}
            {%- endcall -%}
        {%- endif -%}
        {%- if language == 'python' -%}
            {%- call statement('drop_tmp_relation') -%}
                drop {{ 'view' if result_as_view else 'table' }} if exists {{ tmp_relation }}
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}

    {%- set revoke_grants = should_revoke(existing_relation, full_refresh_mode) -%}
    {%- do apply_grants(target_relation, config.get('grants'), revoke_grants) -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
