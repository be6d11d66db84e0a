"""Current state of the customer balances source, merged from the versions its runs changed."""

from spark_cdc.change_events.evolution import add_missing_columns
from spark_cdc.change_events.pipeline import SourceConfig, evolved_config
from spark_cdc.change_events.progress import (
    latest_batch,
    pending_process_ids,
    record_progress,
    resolved_through,
)
from spark_cdc.change_events.resolve import current_changes, current_rows
from spark_cdc.dbt_context import process_id


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        post_hook=["reset spark.databricks.delta.commitInfo.userMetadata"],
    )
    meta = dbt.config.get("meta")
    declared = SourceConfig.from_mapping("customers", meta["change_events"])
    ledger = dbt.ref("int_change_events__customers_ledger")
    config = evolved_config(declared, ledger)
    history = dbt.ref("change_events__customers_history")
    record_progress(session, latest_batch(ledger))
    if not dbt.is_incremental:
        return current_rows(history, config.schema)
    # Discovered columns are added here rather than by on_schema_change, which would also add
    # the merge's _is_deleted flag to the table.
    add_missing_columns(session, str(dbt.this), config.schema)
    # Every run whose history changes this table may not reflect yet (a run killed before this
    # model wrote leaves its changes to the next run).
    through = resolved_through(session, str(dbt.this))
    runs = pending_process_ids(ledger, through, process_id(session))
    return current_changes(history, config.schema, runs)
