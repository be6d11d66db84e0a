select
    customer_id,
    first_name,
    last_name,
    segment,
    updated_at,
    lower(email) as email
from spark_cdc.raw_customers