"""SCD2 versions of the customer balances source: one per action of every applied event."""

from spark_cdc.change_events.pipeline import SourceConfig, history_increment
from spark_cdc.change_events.progress import latest_batch, record_progress, resolved_through
from spark_cdc.dbt_context import process_id


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        post_hook=["reset spark.databricks.delta.commitInfo.userMetadata"],
    )
    meta = dbt.config.get("meta")
    config = SourceConfig.from_mapping("customers", meta["change_events"])
    ledger = dbt.ref("int_change_events__customers_ledger")
    initial = dbt.ref("stg_change_events__customers_initial")
    prior = session.table(str(dbt.this)) if dbt.is_incremental else None
    through = resolved_through(session, str(dbt.this)) if dbt.is_incremental else None
    versions = history_increment(
        ledger, prior, initial, config, meta["high_dttm"], process_id(session), through
    )
    # The write's commit records the ledger batches the history now reflects.
    record_progress(session, latest_batch(ledger))
    return versions
