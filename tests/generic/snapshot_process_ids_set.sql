{#- The insert process id and insert time are set on every row; the close process id and close
    time are set on exactly the closed rows. Returns the rows that break this. -#}
{% test snapshot_process_ids_set(model, valid_to='dbt_valid_to', valid_to_current=none) %}
    {%- set meta = spark_cdc.snapshot_metadata_column_names() -%}
    {%- set open_row = spark_cdc.snapshot_test_is_open(valid_to, valid_to_current) -%}
    select *
    from {{ model }}
    where
        {{ meta.insert_process_id }} is null
        or {{ meta.inserted_at }} is null
        or ({{ open_row }} and ({{ meta.close_process_id }} is not null or {{ meta.closed_at }} is not null))
        or (not {{ open_row }} and ({{ meta.close_process_id }} is null or {{ meta.closed_at }} is null))
{% endtest %}
