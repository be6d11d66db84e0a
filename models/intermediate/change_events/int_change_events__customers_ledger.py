"""Every event of the customer balances feed once, with its status (applied, duplicate,
quarantined) and reason; new batches are appended."""

from spark_cdc.change_events.pipeline import SourceConfig, ledger_increment
from spark_cdc.dbt_context import process_id


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    meta = dbt.config.get("meta")
    config = SourceConfig.from_mapping("customers", meta["change_events"])
    feed = dbt.ref("stg_change_events__customers")
    prior = session.table(str(dbt.this)) if dbt.is_incremental else None
    return ledger_increment(feed, prior, config, process_id(session))
