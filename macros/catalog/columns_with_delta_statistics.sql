{#
  A relation's `describe extended` rows, as dbt-spark reads them, with a real "Statistics" row
  for a Delta table when `dbt docs generate` builds the catalog.

  dbt-spark takes a table's size and row count from that row when the `show table extended`
  listing does not name the table's columns (a Delta table created by CTAS: snapshots, seeds,
  SQL models; see spark__list_relations_without_caching below for the others). A Delta table's
  metastore entry holds no row count (ANALYZE TABLE does not run on one), so the docs site
  showed no statistics for these tables. During `dbt docs generate` a Delta table's
  rows are returned with one more row, "Statistics: <bytes> bytes, <rows> rows": the bytes of
  the table's current files (`describe detail`) and its row count (`count(*)`, answered from
  Delta's log where its file statistics allow). Every other command, and every view or
  non-Delta table, gets the rows untouched, at no extra cost.
#}
{% macro spark__get_columns_in_relation_raw(relation) -%}
    {% call statement('get_columns_in_relation_raw', fetch_result=True) %}
        describe extended {{ relation }}
    {% endcall %}
    {% set described = load_result('get_columns_in_relation_raw').table %}
    {% if not spark_cdc.catalog_statistics_wanted(relation) %}
        {% do return(described) %}
    {% endif %}
    {% set detail = run_query('describe detail ' ~ relation) %}
    {% set counted = run_query('select count(*) from ' ~ relation) %}
    {% set size_in_bytes = detail.columns['sizeInBytes'].values()[0] %}
    {% set statistics = size_in_bytes ~ ' bytes, ' ~ counted.columns[0].values()[0] ~ ' rows' %}
    {% set rows = [] %}
    {% for row in described.rows %}
        {% do rows.append(spark_cdc.catalog_described_row(row[0], row[1], row[2])) %}
    {% endfor %}
    {% do rows.append(spark_cdc.catalog_described_row('Statistics', statistics, none)) %}
    {% call statement('get_columns_in_relation_with_statistics', fetch_result=True) %}
        {{ rows | join('\nunion all\n') }}
    {% endcall %}
    {% do return(load_result('get_columns_in_relation_with_statistics').table) %}
{%- endmacro %}

{#- True while `dbt docs generate` reads a Delta table (not a view) for the catalog. -#}
{% macro catalog_statistics_wanted(relation) %}
    {{- return(
        invocation_args_dict.get('which') == 'generate'
        and relation.is_delta | default(false)
        and not relation.is_view
    ) -}}
{% endmacro %}

{#- One `describe extended` row as a select of literals (col_name, data_type, comment). -#}
{% macro catalog_described_row(col_name, data_type, comment) %}
    {{- return(
        'select ' ~ spark_cdc.catalog_string_literal(col_name) ~ ' as col_name, '
        ~ spark_cdc.catalog_string_literal(data_type) ~ ' as data_type, '
        ~ spark_cdc.catalog_string_literal(comment) ~ ' as comment'
    ) -}}
{% endmacro %}

{#- A Spark SQL string literal of `text` (backslashes, quotes and line ends escaped), or null. -#}
{% macro catalog_string_literal(text) %}
    {%- if text is none -%}
        {{- return('cast(null as string)') -}}
    {%- endif -%}
    {%- set escaped = (text | string).replace('\\', '\\\\').replace("'", "\\'").replace('\n', '\\n') -%}
    {{- return("'" ~ escaped ~ "'") -}}
{% endmacro %}

{#
  The relations of a schema, as dbt-spark lists them (`show table extended`). While
  `dbt docs generate` runs, a Delta table whose listing carries its columns (one created with an
  explicit column list, as the Python models' tables are: dbt-spark then reads the catalog from
  this listing, not from `describe extended`) gets its real size and row count in the
  "Statistics:" line, where the metastore says 0 rows and counts the bytes of every file the
  table ever had. Every other command and relation gets the listing untouched.
#}
{% macro spark__list_relations_without_caching(relation) %}
    {% call statement('list_relations_without_caching', fetch_result=True) -%}
        show table extended in {{ relation.schema }} like '*'
    {%- endcall %}
    {% set listed = load_result('list_relations_without_caching').table %}
    {% if invocation_args_dict.get('which') != 'generate' %}
        {% do return(listed) %}
    {% endif %}
    {% set counted = [] %}
    {% set rows = [] %}
    {% for row in listed.rows %}
        {% set information = row[3] | string %}
        {% if 'Provider: delta' in information and '\n |-- ' in information
            and '\nStatistics: ' in information %}
            {% set table = '`' ~ row[0] ~ '`.`' ~ row[1] ~ '`' %}
            {% set size_in_bytes = run_query('describe detail ' ~ table).columns['sizeInBytes'].values()[0] %}
            {% set count = run_query('select count(*) from ' ~ table).columns[0].values()[0] %}
            {% set information = modules.re.sub(
                '(?m)^Statistics: .*$',
                'Statistics: ' ~ size_in_bytes ~ ' bytes, ' ~ count ~ ' rows',
                information
            ) %}
            {% do counted.append(table) %}
        {% endif %}
        {% do rows.append(
            'select ' ~ spark_cdc.catalog_string_literal(row[0]) ~ ' as namespace, '
            ~ spark_cdc.catalog_string_literal(row[1]) ~ ' as tableName, '
            ~ (row[2] | string | lower) ~ ' as isTemporary, '
            ~ spark_cdc.catalog_string_literal(information) ~ ' as information'
        ) %}
    {% endfor %}
    {% if not counted %}
        {% do return(listed) %}
    {% endif %}
    {% call statement('list_relations_with_row_counts', fetch_result=True) -%}
        {{ rows | join('\nunion all\n') }}
    {%- endcall %}
    {% do return(load_result('list_relations_with_row_counts').table) %}
{% endmacro %}
