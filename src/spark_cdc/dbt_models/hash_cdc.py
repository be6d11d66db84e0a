"""Entry points of a hash-CDC dataset's Python models: staging, current state, sensitive columns.

Settings (``meta.hash_cdc``): ``dataset`` (its name: extracts land under
``<landing_root>/<dataset>/<effective date>/``), ``key_columns``, ``nonkey_columns``,
``sensitive_columns``, ``excluded_columns`` (name -> Spark type), ``extract_mode``,
``extract_format``, ``max_delete_fraction``, and the run's ``effective_date``, ``landing_root``,
``force`` and ``allow_mass_delete`` (rendered from dbt vars).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.dbt_models.settings import block
from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.run import RunSettings, current_state, prepare_current_write, staged_extract
from spark_cdc.hash_cdc.stage import REASON


def settings(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The dataset's ``hash_cdc`` block."""
    return block(meta, "hash_cdc", "dataset")


def dataset_config(meta: Mapping[str, Any] | None) -> DatasetConfig:
    """The dataset's columns by role, mode, format and mass-delete guard."""
    found = settings(meta)
    return DatasetConfig.from_mapping(str(found["dataset"]), found)


def run_settings(meta: Mapping[str, Any] | None) -> RunSettings:
    """The run's effective date, landing root and overrides for this dataset."""
    return RunSettings.from_settings(settings(meta))


def staged(
    dbt: Any, session: SparkSession, meta: Mapping[str, Any], current_model: str
) -> DataFrame:
    """Stage 1: the extract of the run's date, cast, hashed and flagged. ``current_model`` is
    the dataset's current model (read, not ref'd: it reads this model), which tells which
    dates were applied: an older date is refused before anything is written."""
    current = f"{dbt.this.schema}.{current_model}"
    return staged_extract(session, dataset_config(meta), run_settings(meta), current)


def current(
    dbt: Any, session: SparkSession, meta: Mapping[str, Any], staged: DataFrame
) -> DataFrame:
    """Stages 2-4: the current table after the run, behind its guards (an older date, a
    zero-row or mass-deleting full extract are refused before the table is written)."""
    run = run_settings(meta)
    state = current_state(session, staged, str(dbt.this), dataset_config(meta), run)
    prepare_current_write(session, run)
    return state


def sensitive(
    dbt: Any, session: SparkSession, meta: Mapping[str, Any], staged: DataFrame
) -> DataFrame:
    """The applied rows' sensitive columns by key_hash, with the date they were supplied on."""
    config = dataset_config(meta)
    valid = staged.where(F.col(REASON).isNull())
    return valid.select("key_hash", *config.sensitive, F.col("eff_date").alias("supplied_on"))
