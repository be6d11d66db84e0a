{#- The customer source as it looked on day var('source_day') (1, 2 or 3). -#}
{%- set source_day = var('source_day', 1) | int -%}

select
    region,
    customer_id,
    customer_name,
    email,
    segment,
    {%- if source_day >= 3 %}
        loyalty_tier,
    {%- endif %}
    updated_at
from {{ ref('customer_states') }}
where source_day = {{ source_day }}
