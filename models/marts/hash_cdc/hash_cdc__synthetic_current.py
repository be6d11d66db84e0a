"""Stages 2-4 of hash CDC for synthetic: the current state with operation and date, behind the
run's guards (older date, zero-row or mass-deleting full extract)."""

from spark_cdc.dbt_models import hash_cdc


def model(dbt, session):
    dbt.config(
        materialized="table",
        post_hook=[
            "reset spark.databricks.delta.commitInfo.userMetadata",
            "reset spark.databricks.delta.properties.defaults.dataSkippingStatsColumns",
        ],
    )
    meta = dbt.config.get("meta")
    staged = dbt.ref("stg_hash_cdc__synthetic")
    return hash_cdc.current(dbt, session, meta, staged)
