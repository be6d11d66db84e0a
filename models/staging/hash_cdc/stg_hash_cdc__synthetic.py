"""Stage 1 of hash CDC for the synthetic extract: cast, hash, flag quarantine reasons."""

from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.run import RunSettings, staged_extract


def model(dbt, session):
    dbt.config(materialized="table")
    meta = dbt.config.get("meta")
    config = DatasetConfig.from_mapping("synthetic", meta["hash_cdc"])
    # The current table (not a ref: it reads this model) tells which dates were applied.
    current = f"{dbt.this.schema}.hash_cdc__synthetic_current"
    return staged_extract(session, config, RunSettings.from_meta(meta), current)
