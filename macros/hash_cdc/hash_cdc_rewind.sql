{#- Pre-hook of the hash-CDC tables kept per date: when an older effective date is forced
    (the dataset's force setting, var hash_cdc_force), the rows of later dates are removed, so
    the tables describe the state as of the forced date (later dates are then re-run in order). -#}
{% macro hash_cdc_rewind(date_column) %}
    {%- if execute and spark_cdc.hash_cdc_flag('force') and load_relation(this) is not none -%}
        delete from {{ this }}
        where {{ date_column }} > {{ spark_cdc.hash_cdc_run_date() }}
    {%- endif -%}
{% endmacro %}
