-- The landed change-event feed of customers, as delivered.
select
    change_type,
    event_ts,
    event_seq,
    column_names,
    column_values,
    old_key_names,
    old_key_values,
    _batch_id,
    _ingested_at,
    _source_file,
    _landing_error,
    _raw_record
from {{ source('change_events__customers', 'events') }}
