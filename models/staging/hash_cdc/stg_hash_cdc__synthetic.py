"""Stage 1 of hash CDC for the synthetic extract: cast, hash, flag quarantine reasons."""

from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.extracts import landing_folder, read_extract
from spark_cdc.hash_cdc.stage import stage_extract


def model(dbt, session):
    dbt.config(materialized="table")
    meta = dbt.config.get("meta")
    config = DatasetConfig.from_mapping("synthetic", meta["hash_cdc"])
    date = meta["effective_date"]
    folder = landing_folder(meta["landing_root"], "synthetic", date)
    raw = read_extract(session, folder, meta["hash_cdc"].get("extract_format", "csv"))
    return stage_extract(raw, config, date)
