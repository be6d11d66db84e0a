{#- Pre-hook of the hash-CDC tables kept per date: when an older effective date is forced
    (var hash_cdc_force), the rows of later dates are removed, so the tables describe the
    state as of the forced date (later dates are then re-run in order). -#}
{% macro hash_cdc_rewind(date_column) %}
    {%- if execute and var('hash_cdc_force', false) and load_relation(this) is not none -%}
        delete from {{ this }}
        where {{ date_column }} > to_date('{{ var("hash_cdc_effective_date") }}')
    {%- endif -%}
{% endmacro %}
