{#- The high end date column holds the project's high end date on exactly the open rows, and
    dbt_valid_to on the closed ones. Returns the rows where it does not. -#}
{% test snapshot_high_end_on_open_rows(
    model, valid_to='dbt_valid_to', valid_to_current=none, high_end_column=none
) %}
    {%- set high_column = high_end_column or spark_cdc.snapshot_metadata_column_names().valid_to_high -%}
    {%- set high = "'" ~ var('default_high_dttm', '9999-12-31 23:59:59') ~ "'" -%}
    {%- set open_row = spark_cdc.snapshot_test_is_open(valid_to, valid_to_current) -%}
    select *
    from {{ model }}
    where
        ({{ open_row }} and not ({{ high_column }} <=> cast({{ high }} as timestamp)))
        or (not {{ open_row }} and not ({{ high_column }} <=> {{ valid_to }}))
        or (not {{ open_row }} and {{ high_column }} = cast({{ high }} as timestamp))
{% endtest %}
