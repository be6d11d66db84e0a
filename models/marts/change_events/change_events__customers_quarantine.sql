-- Events of the customer balances feed that were not applied, with the raw event and reason.
select
    _batch_id,
    change_type,
    event_ts,
    event_seq,
    column_names,
    column_values,
    old_key_names,
    old_key_values,
    quarantine_reason,
    _raw_record as raw_record,
    _source_file as source_file,
    event_fingerprint,
    process_id
from {{ ref('int_change_events__customers_ledger') }}
where status = 'quarantined'
