-- Rows of the customer balances source that existed before its first event.
select
    id,
    name,
    amount,
    created_at,
    updated_at
from {{ source('cdc_landing', 'customer_initial_rows') }}
