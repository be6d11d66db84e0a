"""The dbt-native peer of the change-event models: what an analytics engineer writes without
spark_cdc, on stock dbt-spark's macros (the ``sparkcdc`` session target of the same home, with
no dispatch to the package).

- ``customers_latest``: an incremental model (``incremental_strategy: merge``, ``unique_key: id``)
  of each key's latest event among the batches above the table's highest ``_batch_id`` (the
  first build: the initial rows and every landed batch), a delete kept as a flagged row;
- ``customers_live``: a view of the rows not deleted;
- ``customers_snapshot``: ``dbt snapshot`` of the view (timestamp strategy on ``updated_at``,
  ``hard_deletes: new_record``): the history.

It applies neither key changes (an update that moves a key leaves the old key live) nor late
events (an event older than its key's row still replaces it): ``wrong_rows`` counts the keys
whose live row differs from the project's current table after the same batches.
"""

from __future__ import annotations

from pathlib import Path

PROJECT_YML = """\
name: native_peer
version: "1.0.0"
config-version: 2
profile: native_peer
models:
  native_peer:
    +file_format: delta
snapshots:
  +file_format: delta
"""

PROFILES_YML = """\
native_peer:
  target: local
  outputs:
    local:
      type: sparkcdc
      method: session
      host: "local[2]"
      schema: native_peer
      threads: 1
"""

SOURCES_YML = """\
sources:
  - name: landing
    schema: landing
    tables:
      - name: customers_change_events
      - name: customers_initial_rows
"""

LATEST_SQL = """\
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
with events as (
    select
        cast(coalesce(element_at(column_values, 1), element_at(old_key_values, 1)) as int) as id,
        lower(change_type) = 'delete' as is_deleted,
        element_at(column_values, 2) as name,
        cast(element_at(column_values, 3) as int) as amount,
        event_ts as updated_at,
        event_seq,
        _batch_id
    from {{ source('landing', 'customers_change_events') }}
    where lower(change_type) in ('insert', 'update', 'delete') and event_ts is not null
    {% if is_incremental() %}
        and _batch_id > (select max(_batch_id) from {{ this }})
    {% endif %}
{% if not is_incremental() %}
    union all
    select id, false, name, amount, updated_at, -1, -1
    from {{ source('landing', 'customers_initial_rows') }}
{% endif %}
),

ranked as (
    select
        *,
        row_number() over (partition by id order by updated_at desc, event_seq desc) as latest
    from events
)

select id, is_deleted, name, amount, updated_at, _batch_id
from ranked
-- the generator sends events without a key (the project quarantines them)
where latest = 1 and id is not null
"""

LIVE_SQL = """\
{{ config(materialized='view') }}
select id, name, amount, updated_at from {{ ref('customers_latest') }} where not is_deleted
"""

SNAPSHOT_YML = """\
snapshots:
  - name: customers_snapshot
    relation: ref('customers_live')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: new_record
"""


def write_project(folder: Path) -> Path:
    """The peer's dbt project (its profile in the same folder); its path."""
    for relative, text in {
        "dbt_project.yml": PROJECT_YML,
        "profiles.yml": PROFILES_YML,
        "models/sources.yml": SOURCES_YML,
        "models/customers_latest.sql": LATEST_SQL,
        "models/customers_live.sql": LIVE_SQL,
        "snapshots/customers_snapshot.yml": SNAPSHOT_YML,
    }.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder
