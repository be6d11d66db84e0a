"""Stages 2-4 of hash CDC for the synthetic extract: the current state with operation and date,
behind the run's guards (older date, zero-row or mass-deleting full extract)."""

from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.run import RunSettings, current_state, prepare_current_write


def model(dbt, session):
    dbt.config(
        materialized="table",
        post_hook=[
            "reset spark.databricks.delta.commitInfo.userMetadata",
            "reset spark.databricks.delta.properties.defaults.dataSkippingStatsColumns",
        ],
    )
    meta = dbt.config.get("meta")
    config = DatasetConfig.from_mapping("synthetic", meta["hash_cdc"])
    run = RunSettings.from_meta(meta)
    staged = dbt.ref("stg_hash_cdc__synthetic")
    current = current_state(session, staged, str(dbt.this), config, run)
    prepare_current_write(session, run)
    return current
