"""Sensitive columns of synthetic, kept apart (own schema, own grants), by key_hash."""

from spark_cdc.dbt_models import hash_cdc


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key="key_hash",
        schema="restricted",
    )
    meta = dbt.config.get("meta")
    # Written only after the current table accepted the run (a refused run writes nothing).
    dbt.ref("hash_cdc__synthetic_current")
    staged = dbt.ref("stg_hash_cdc__synthetic")
    return hash_cdc.sensitive(dbt, session, meta, staged)
