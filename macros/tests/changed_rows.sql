{#- Data tests that read what changed since they last passed. A test whose `where` holds
    __spark_cdc_changed_rows__ reads the rows that the tested table's writes since the test's last
    pass recorded as changed (spark_cdc.core.changed_rows: a lower bound of one column, in the
    userMetadata of each Delta commit), and Delta skips the files below the bound. A failing test
    keeps reading its failing rows until they are fixed: its bound moves only when it passes (the
    on-run-end hook record_scoped_test_passes). The whole table is read when the test has no pass
    on record for the table's current history, when a change since then recorded no bound (a
    first build, a full refresh, an UPDATE, DELETE or RESTORE by hand), and for a full audit:
    `dbt test --vars '{spark_cdc_full_audit: true}'`. -#}
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


{#- Delta operations that change no row (schema and property changes, file maintenance). -#}
{% macro rowless_delta_operations() %}
    {{ return([
        'ADD COLUMNS', 'CHANGE COLUMN', 'REPLACE COLUMNS', 'RENAME COLUMN', 'DROP COLUMNS',
        'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES', 'ADD CONSTRAINT', 'DROP CONSTRAINT',
        'UPGRADE PROTOCOL', 'OPTIMIZE', 'VACUUM START', 'VACUUM END', 'REORG'
    ]) }}
{% endmacro %}


{#- The table that keeps, per scoped test and tested table, the table versions the test passed at. -#}
{% macro scoped_test_passes_relation() %}
    {{ return(api.Relation.create(schema=target.schema, identifier='spark_cdc_scoped_test_passes')) }}
{% endmacro %}


{#- The version (and its commit time) of `relation` at which the test being rendered last
    passed, or none. -#}
{% macro last_scoped_test_pass(relation) %}
    {%- set passes = spark_cdc.scoped_test_passes_relation() -%}
    {%- if load_relation(passes) is none -%}{{ return(none) }}{%- endif -%}
    {%- set found = run_query(
        'select table_version, version_timestamp from ' ~ passes
        ~ " where test_id = '" ~ model.unique_id ~ "' and tested_relation = '"
        ~ (relation | string | replace("'", "''")) ~ "' order by recorded_at desc limit 1"
    ) -%}
    {%- if found.rows | length == 0 -%}{{ return(none) }}{%- endif -%}
    {{ return({'version': found.rows[0][0], 'timestamp': found.rows[0][1]}) }}
{% endmacro %}


{#- One commit's recorded bound as a predicate, or none when it recorded none. -#}
{% macro commit_changed_rows_predicate(commit) %}
    {%- set record = fromjson(commit['userMetadata'] or '{}', {}) -%}
    {%- set bounds = record.get('spark_cdc_changed_from') if record is mapping else none -%}
    {%- if commit['operation'] not in ('MERGE', 'WRITE') or bounds is not mapping or not bounds -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set parts = [] -%}
    {%- for column, lowest in bounds.items() | sort -%}
        {%- set literal = lowest if lowest is number
            else "'" ~ (lowest | string | replace("'", "''")) ~ "'" -%}
        {%- do parts.append(adapter.quote(column) ~ ' >= ' ~ literal) -%}
    {%- endfor -%}
    {{ return('(' ~ parts | join(' and ') ~ ')') }}
{% endmacro %}


{#- The predicate of the rows `relation`'s commits since the rendered test's last pass recorded
    as changed ('true': every row; 'false': no commit since), followed by a comment that names
    the table version it covers, read back by record_scoped_test_passes. -#}
{% macro changed_rows_predicate(relation) %}
    {%- if not execute or var('spark_cdc_full_audit', false) -%}{{ return('true') }}{%- endif -%}
    {#- dbt compile and docs generate render tests before the tables may exist. -#}
    {%- if load_relation(relation) is none -%}{{ return('true') }}{%- endif -%}
    {%- set commits = run_query('describe history ' ~ relation ~ ' limit 100') -%}
    {%- if commits.rows | length == 0 -%}{{ return('true') }}{%- endif -%}
    {%- set latest = commits.rows[0] -%}
    {%- set passed = spark_cdc.last_scoped_test_pass(relation) -%}
    {%- set scope = namespace(reached=false, whole=passed is none, predicates=[]) -%}
    {%- for commit in commits.rows -%}
        {%- if not scope.reached and not scope.whole -%}
            {%- if commit['version'] == passed['version'] -%}
                {%- set scope.reached = true -%}
                {%- if (commit['timestamp'] | string) != (passed['timestamp'] | string) -%}
                    {#- The table was dropped and built again since the pass. -#}
                    {%- set scope.whole = true -%}
                {%- endif -%}
            {%- elif commit['version'] < passed['version'] -%}
                {%- set scope.whole = true -%}
            {%- elif commit['operation'] not in spark_cdc.rowless_delta_operations() -%}
                {%- set predicate = spark_cdc.commit_changed_rows_predicate(commit) -%}
                {%- if predicate is none -%}
                    {%- set scope.whole = true -%}
                {%- elif predicate not in scope.predicates -%}
                    {%- do scope.predicates.append(predicate) -%}
                {%- endif -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if scope.whole or not scope.reached -%}
        {%- set predicate = 'true' -%}
    {%- elif scope.predicates -%}
        {%- set predicate = '(' ~ scope.predicates | join(' or ') ~ ')' -%}
    {%- else -%}
        {%- set predicate = 'false' -%}
    {%- endif -%}
    {%- set covered = {'relation': relation | string, 'version': latest['version'] | int,
                       'timestamp': latest['timestamp'] | string} -%}
    {{ return(predicate ~ ' /* spark_cdc_scoped_rows ' ~ tojson(covered) ~ ' */') }}
{% endmacro %}


{#- on-run-end: record, for each scoped data test that passed, the table version its rows were
    read at; its next run reads only what changed after it. A failing, warning or erroring test
    records nothing, so it reads the same rows again (and any changed since). The table keeps one
    row per test and tested table (a MERGE: it does not grow with the runs). With the var
    spark_cdc_record_scoped_test_passes false (a role that may not write in the target schema)
    nothing is recorded: the tests read what changed since the last pass a writing run recorded. -#}
{% macro record_scoped_test_passes(results) %}
    {%- if not execute or not var('spark_cdc_record_scoped_test_passes', true) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set newest = {} -%}
    {%- for result in results -%}
        {%- if result.node.resource_type == 'test' and result.status == 'pass' -%}
            {%- set code = result.node.compiled_code or '' -%}
            {%- for mark in modules.re.findall('/\\* spark_cdc_scoped_rows (\\{[^}]*\\}) \\*/', code) -%}
                {%- set covered = fromjson(mark) -%}
                {%- set key = (result.node.unique_id, covered['relation']) -%}
                {%- if key not in newest or newest[key]['version'] < covered['version'] -%}
                    {%- do newest.update({key: covered}) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if newest -%}
        {%- set rows = [] -%}
        {%- for key, covered in newest.items() | sort -%}
            {%- do rows.append("('" ~ key[0] ~ "', '" ~ (key[1] | replace("'", "''")) ~ "', "
                ~ covered['version'] ~ ", '" ~ covered['timestamp'] ~ "', '" ~ invocation_id
                ~ "', current_timestamp())") -%}
        {%- endfor -%}
        {%- set passes = spark_cdc.scoped_test_passes_relation() -%}
        {%- do run_query(
            'create table if not exists ' ~ passes ~ ' (test_id string, tested_relation string, '
            ~ 'table_version bigint, version_timestamp string, invocation_id string, '
            ~ 'recorded_at timestamp) using delta'
        ) -%}
        {%- do run_query(
            '/* spark_cdc: retry on a write conflict */ merge into ' ~ passes
            ~ ' as recorded using (select * from values '
            ~ rows | join(', ') ~ ' as passed(test_id, tested_relation, table_version, '
            ~ 'version_timestamp, invocation_id, recorded_at)) as passed '
            ~ 'on recorded.test_id = passed.test_id '
            ~ 'and recorded.tested_relation = passed.tested_relation '
            ~ 'when matched then update set * when not matched then insert *'
        ) -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
