{{ config(pre_hook="{{ spark_cdc.stage_landing_source('schema_drift__events', 'raw_events') }}") }}

-- Every landed JSON line of events with the file it came from; the batch is the file's folder.
{{ spark_cdc.schema_drift_raw_events(source('schema_drift__events', 'raw_events')) }}
