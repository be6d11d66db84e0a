"""Current state of the customer balances source, merged from the versions its run changed."""

from spark_cdc.change_events.evolution import add_missing_columns
from spark_cdc.change_events.pipeline import SourceConfig, evolved_config
from spark_cdc.change_events.resolve import current_changes, current_rows
from spark_cdc.dbt_context import process_id


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="merge")
    meta = dbt.config.get("meta")
    declared = SourceConfig.from_mapping("customers", meta["change_events"])
    config = evolved_config(declared, dbt.ref("int_change_events__customers_ledger"))
    history = dbt.ref("change_events__customers_history")
    if not dbt.is_incremental:
        return current_rows(history, config.schema)
    # Discovered columns are added here rather than by on_schema_change, which would also add
    # the merge's _is_deleted flag to the table.
    add_missing_columns(session, str(dbt.this), config.schema)
    return current_changes(history, config.schema, process_id(session))
