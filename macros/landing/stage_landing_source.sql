{#-
    Create (if missing) the metastore table of a landing source declared with an `external`
    block (location, file_format, options), and refresh its file listing so that files landed
    since the last query are read. A table that points at another location (the landing root
    var changed) is re-created over the declared one: it only describes files, dropping it
    deletes none. Used as a pre-hook of the source's staging model; also callable by hand:
    dbt run-operation stage_landing_source --args '{source_name: x, table_name: y}'
-#}
{% macro stage_landing_source(source_name, table_name) %}
    {%- if execute -%}
        {%- set node = graph.sources.values()
            | selectattr("source_name", "equalto", source_name)
            | selectattr("name", "equalto", table_name)
            | first -%}
        {%- set external = node.external -%}
        {%- set relation = source(source_name, table_name) -%}
        {%- set options = external.get("options") or {} -%}
        {%- set location = external.location | trim -%}
        {%- if target.type == 'sparkcdc' -%}
            {%- set location = adapter.spark_location(location) -%}
        {%- endif -%}
        {%- do run_query("create schema if not exists " ~ relation.schema) -%}
        {%- if load_relation(relation) is not none -%}
            {%- set described = run_query("describe table extended " ~ relation) -%}
            {%- set current = [] -%}
            {%- for row in described.rows if row[0] == 'Location' -%}
                {%- do current.append(row[1] | replace('file:', '') | trim) -%}
            {%- endfor -%}
            {%- if current and current[0].rstrip('/') != location.replace('file:', '').rstrip('/') -%}
                {%- do run_query("drop table " ~ relation) -%}
            {%- endif -%}
        {%- endif -%}
        {%- call statement("create_landing_table") -%}
            create table if not exists {{ relation }}
            using {{ external.file_format }}
            {%- if options %}
                options (
                    {%- for key, value in options.items() %}
                        '{{ key }}' = '{{ value }}'{{ "," if not loop.last }}
                    {%- endfor %}
                )
            {%- endif %}
            location '{{ location }}'
        {%- endcall -%}
        {%- do run_query("refresh table " ~ relation) -%}
    {%- endif -%}
{% endmacro %}
