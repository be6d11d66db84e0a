-- Every run's counts reconcile: in = applied + quarantined, applied = I + U + N.
select
    eff_date,
    rows_in,
    valid_rows,
    quarantined_rows,
    inserted,
    updated,
    unchanged
from {{ ref('hash_cdc__synthetic_run_summary') }}
where
    rows_in != valid_rows + quarantined_rows
    or valid_rows != inserted + updated + unchanged
