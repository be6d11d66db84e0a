"""Sensitive columns of the synthetic dataset, kept apart (own schema, own grants), by key_hash."""

from pyspark.sql import functions as F

from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.stage import REASON


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key="key_hash",
        schema="restricted",
    )
    meta = dbt.config.get("meta")
    config = DatasetConfig.from_mapping("synthetic", meta["hash_cdc"])
    # Written only after the current table accepted the run (a refused run writes nothing).
    dbt.ref("hash_cdc__synthetic_current")
    staged = dbt.ref("stg_hash_cdc__synthetic").where(F.col(REASON).isNull())
    return staged.select("key_hash", *config.sensitive, F.col("eff_date").alias("supplied_on"))
