"""Bronze of events: every landed JSON line once, with its event type, variation hash and parse
error; each run appends the files landed since the last one as a new load."""

from spark_cdc.dbt_models import schema_drift


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="append",
        full_refresh=False,
        post_hook=[
            # the load's claim (spark_cdc.core.idempotent_loads)
            "reset spark.databricks.delta.write.txnAppId",
            "reset spark.databricks.delta.write.txnVersion",
            "reset spark.databricks.delta.commitInfo.userMetadata",
        ],
    )
    meta = dbt.config.get("meta")
    raw = dbt.ref("stg_schema_drift__events")
    return schema_drift.bronze(dbt, session, meta, raw)
