{#- The account source as it looked on day var('integration_day'). -#}
select
    account_id,
    owner,
    plan,
    updated_at
from {{ ref('account_states') }}
where day = {{ var('integration_day', 1) | int }}
