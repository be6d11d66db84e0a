"""Stage 1 of hash CDC for synthetic: cast, hash, flag quarantine reasons."""

from spark_cdc.dbt_models import hash_cdc


def model(dbt, session):
    dbt.config(materialized="table")
    meta = dbt.config.get("meta")
    return hash_cdc.staged(dbt, session, meta, current_model="hash_cdc__synthetic_current")
