"""Current state of accounts, merged from the versions its runs changed."""

from spark_cdc.dbt_models import change_events


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["region", "account_no"],
        merge_delete_column="_is_deleted",
        post_hook=["reset spark.databricks.delta.commitInfo.userMetadata"],
    )
    meta = dbt.config.get("meta")
    ledger = dbt.ref("int_change_events__accounts_ledger")
    history = dbt.ref("change_events__accounts_history")
    return change_events.current(dbt, session, meta, ledger, history)
