{#- No two back-to-back versions of a key (one ends where the next starts) carry the same tracked
    values. Tracked: every column except the validity, dbt_scd_id, dbt_updated_at and operational
    metadata columns and the `exclude` list (dbt_is_deleted is tracked). Returns the phantoms. -#}
{% test snapshot_no_phantom_versions(
    model, unique_key, valid_from='dbt_valid_from', valid_to='dbt_valid_to',
    scd_id='dbt_scd_id', updated_at='dbt_updated_at', exclude=[]
) %}
    {%- set keys = spark_cdc.snapshot_key_list(unique_key) -%}
    {%- set skipped = [valid_from, valid_to, scd_id, updated_at] + exclude
        + (spark_cdc.snapshot_metadata_column_names().values() | list) -%}
    {%- set skipped = skipped | map('lower') | list -%}
    {%- set tracked = [] -%}
    {%- if execute -%}
        {%- for column in adapter.get_columns_in_relation(model) -%}
            {%- if column.name | lower not in skipped and column.name not in keys -%}
                {%- do tracked.append(adapter.quote(column.name)) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    with versions as (
        select
            *,
            lag({{ valid_to }}) over (
                partition by {{ keys | join(', ') }} order by {{ valid_from }}
            ) as previous_end,
            lag(struct({{ tracked | join(', ') if tracked else 'null' }})) over (
                partition by {{ keys | join(', ') }} order by {{ valid_from }}
            ) as previous_values,
            struct({{ tracked | join(', ') if tracked else 'null' }}) as current_values
        from {{ model }}
    )

    select *
    from versions
    where previous_end = {{ valid_from }} and previous_values <=> current_values
{% endtest %}
