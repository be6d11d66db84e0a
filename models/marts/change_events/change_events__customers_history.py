"""SCD2 versions of customers: one per action of every applied event."""

from spark_cdc.dbt_models import change_events


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["id", "version_id"],
        merge_update_condition="DBT_INTERNAL_SOURCE.row_hash != DBT_INTERNAL_DEST.row_hash",
        on_schema_change="append_new_columns",
        partition_by="is_current",
        merge_target_floor="valid_to",
        post_hook=[
            "reset spark_cdc.merge.target_floor",
            "reset spark.databricks.delta.commitInfo.userMetadata",
            "reset spark.databricks.delta.properties.defaults.dataSkippingStatsColumns",
            "reset spark.databricks.delta.properties.defaults.enableChangeDataFeed",
            "reset spark.sql.files.maxRecordsPerFile",  # a full build's file size
        ],
    )
    meta = dbt.config.get("meta")
    ledger = dbt.ref("int_change_events__customers_ledger")
    initial = dbt.ref("stg_change_events__customers_initial")
    return change_events.history(dbt, session, meta, ledger, initial)
