"""Every event of customers once, with its status (applied, duplicate, quarantined) and reason;
new batches are appended."""

from spark_cdc.dbt_models import change_events


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="append",
        # a ledger built by an earlier version gains the columns later ones write
        on_schema_change="append_new_columns",
        post_hook=[
            "reset spark.databricks.delta.properties.defaults.dataSkippingStatsColumns",
            "reset spark.sql.files.maxRecordsPerFile",  # a full build's file size
            # the load's claim (spark_cdc.core.idempotent_loads)
            "reset spark.databricks.delta.write.txnAppId",
            "reset spark.databricks.delta.write.txnVersion",
            "reset spark.databricks.delta.commitInfo.userMetadata",
        ],
    )
    meta = dbt.config.get("meta")
    feed = dbt.ref("stg_change_events__customers")
    return change_events.ledger(dbt, session, meta, feed)
