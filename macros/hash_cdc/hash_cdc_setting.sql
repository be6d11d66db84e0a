{#- A setting of the model's hash-CDC dataset: meta.hash_cdc.<name>, from the dataset's YAML
    block (written by spark-cdc add). Empty while dbt parses. -#}
{% macro hash_cdc_setting(name) %}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set settings = (config.get('meta') or {}).get('hash_cdc') -%}
    {%- if settings is not mapping or name not in settings -%}
        {{ exceptions.raise_compiler_error(
            "model " ~ this ~ ": meta.hash_cdc." ~ name ~ " is not set (the dataset's YAML "
            ~ "block, written by spark-cdc add hash-cdc)") }}
    {%- endif -%}
    {{ return(settings[name]) }}
{% endmacro %}


{#- The run's effective date of the model's dataset, as a SQL date. -#}
{% macro hash_cdc_run_date() %}
    {{- "to_date('" ~ (spark_cdc.hash_cdc_setting('effective_date') | string | trim) ~ "')" -}}
{% endmacro %}


{#- Whether a run setting of the model's dataset (force, allow_mass_delete) is on. -#}
{% macro hash_cdc_flag(name) %}
    {{- return((spark_cdc.hash_cdc_setting(name) | string | trim | lower) in ('true', '1', 'yes')) -}}
{% endmacro %}
