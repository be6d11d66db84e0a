-- The landed Debezium messages of accounts, as delivered.
select
    value,
    _batch_id,
    _ingested_at,
    _source_file
from {{ source('change_events__accounts', 'events') }}
