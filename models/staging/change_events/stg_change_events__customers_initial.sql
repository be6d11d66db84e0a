-- Rows of customers that existed before its first event.
select
    id,
    name,
    amount,
    created_at,
    updated_at
from {{ source('change_events__customers', 'initial_rows') }}
