{#- Data tests that read what the latest run changed. A test whose `where` holds
    __spark_cdc_changed_rows__ reads the rows that the tested table's latest write recorded as
    changed (spark_cdc.core.changed_rows: a lower bound of one column, in the userMetadata of its
    Delta commit), and Delta skips the files below the bound. The whole table is read when its
    latest change recorded none (a first build, a full refresh, an UPDATE, DELETE or RESTORE
    by hand) and for a full audit: `dbt test --vars '{spark_cdc_full_audit: true}'`. -#}
{% macro spark__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set placeholder = '__spark_cdc_changed_rows__' -%}
    {%- if where and placeholder in where -%}
        {%- set where = where | replace(placeholder, spark_cdc.changed_rows_predicate(relation)) -%}
    {%- endif -%}
    {%- if where -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ where ~ ') dbt_subquery') -%}
    {%- endif -%}
    {%- do return(relation) -%}
{%- endmacro %}


{#- Delta operations that change no row (schema and property changes, file maintenance): the
    changed rows are those of the latest commit before them. -#}
{% macro rowless_delta_operations() %}
    {{ return([
        'ADD COLUMNS', 'CHANGE COLUMN', 'REPLACE COLUMNS', 'RENAME COLUMN', 'DROP COLUMNS',
        'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES', 'ADD CONSTRAINT', 'DROP CONSTRAINT',
        'UPGRADE PROTOCOL', 'OPTIMIZE', 'VACUUM START', 'VACUUM END', 'REORG'
    ]) }}
{% endmacro %}


{#- The predicate of the rows `relation`'s latest change recorded as changed; 'true' (every
    row) when it recorded none or for a full audit. -#}
{% macro changed_rows_predicate(relation) %}
    {%- if not execute or var('spark_cdc_full_audit', false) -%}{{ return('true') }}{%- endif -%}
    {#- dbt compile and docs generate render tests before the tables may exist. -#}
    {%- if load_relation(relation) is none -%}{{ return('true') }}{%- endif -%}
    {%- set commits = run_query('describe history ' ~ relation ~ ' limit 100') -%}
    {%- set found = namespace(done=false, predicate='true') -%}
    {%- for commit in commits.rows -%}
        {%- if not found.done and commit['operation'] not in spark_cdc.rowless_delta_operations() -%}
            {%- set found.done = true -%}
            {%- set record = fromjson(commit['userMetadata'] or '{}', {}) -%}
            {%- set bounds = record.get('spark_cdc_changed_from') if record is mapping else none -%}
            {%- if commit['operation'] in ('MERGE', 'WRITE') and bounds is mapping and bounds -%}
                {%- set parts = [] -%}
                {%- for column, lowest in bounds.items() -%}
                    {%- set literal = lowest if lowest is number
                        else "'" ~ (lowest | string | replace("'", "''")) ~ "'" -%}
                    {%- do parts.append(adapter.quote(column) ~ ' >= ' ~ literal) -%}
                {%- endfor -%}
                {%- set found.predicate = '(' ~ parts | join(' and ') ~ ')' -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found.predicate) }}
{% endmacro %}
