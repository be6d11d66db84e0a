{#-
    A snapshot as consumers of legacy warehouses expect it: open rows end at the high end date
    instead of NULL. Selects every snapshot column, with dbt_valid_to replaced by the high end
    date column (named like dbt_valid_to), and the operational metadata kept.
    Rendered by models (and linted through them), so its helpers are called unqualified: from a
    package project call it as spark_cdc.snapshot_legacy_view inside a model of the package.
-#}
{% macro snapshot_legacy_view(snapshot_relation, valid_to='dbt_valid_to') %}
    {%- set high_column = snapshot_metadata_column_names().valid_to_high -%}
    {%- set selected = [] -%}
    {%- if execute -%}
        {%- for column in adapter.get_columns_in_relation(snapshot_relation) -%}
            {%- if column.name | lower == valid_to | lower -%}
                {%- do selected.append(high_column ~ ' as ' ~ valid_to) -%}
            {%- elif column.name | lower != high_column | lower -%}
                {%- do selected.append(adapter.quote(column.name)) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    select
        {{ selected | join(',\n        ') if selected else '*' }}
    from {{ snapshot_relation }}
{% endmacro %}
