{{ config(pre_hook="{{ stage_landing_source('schema_drift_landing', 'raw_events') }}") }}

-- Every landed JSON line with the file it came from; the batch is the file's folder.
select
    landed.value as payload,
    landed._metadata.file_path as source_file,
    landed._metadata.file_modification_time as file_modified_at,
    regexp_extract(landed._metadata.file_path, '([^/]+)/[^/]+$', 1) as batch_id
from {{ source('schema_drift_landing', 'raw_events') }} as landed
