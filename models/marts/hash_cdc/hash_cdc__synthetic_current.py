"""Stages 2-4 of hash CDC for the synthetic extract: the current state with operation and date."""

from spark_cdc.hash_cdc.compare import TABLE_PROPERTIES, apply_extract, property_defaults
from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.extracts import commit_metadata, previous_state
from spark_cdc.hash_cdc.stage import REASON


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
    date = meta["effective_date"]
    force = str(meta.get("force", "false")).lower() == "true"
    staged = dbt.ref("stg_hash_cdc__synthetic").where(f"{REASON} is null")
    previous = previous_state(session, str(dbt.this), date, force=force)
    session.conf.set("spark.databricks.delta.commitInfo.userMetadata", commit_metadata(date))
    for setting, value in property_defaults(TABLE_PROPERTIES).items():
        session.conf.set(setting, value)
    return apply_extract(staged, previous, config, date)
