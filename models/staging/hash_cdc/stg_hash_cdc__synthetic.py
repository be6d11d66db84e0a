"""Stage 1 of hash CDC for synthetic: cast, hash, flag quarantine reasons."""

from spark_cdc.dbt_models import hash_cdc


def model(dbt, session):
    dbt.config(materialized="table")
    meta = dbt.config.get("meta")
    return hash_cdc.staged(dbt, session, meta, current_model="hash_cdc__synthetic_current")


def extracts(dbt):
    """The source this model reads (dbt records it when it parses this file, for lineage): its
    files are read by path, from the folder of the run's effective date, not through a table."""
    return dbt.source("hash_cdc__synthetic", "extracts")
