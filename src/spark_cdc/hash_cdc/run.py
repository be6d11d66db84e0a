"""One hash-CDC run (one dataset, one effective date) as the dbt models call it.

The staging model reads and stages the extract; the current model applies it, behind the
guards (an older date without force, a zero-row or mass-deleting full extract): a refusal is
raised before the current table is written, and every other output model depends on the current
model, so a refused run changes no output table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_cdc.core.delta_properties import apply_property_defaults
from spark_cdc.hash_cdc.compare import (
    TABLE_PROPERTIES,
    apply_extract,
    decide,
    decision_counts,
)
from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig
from spark_cdc.hash_cdc.extracts import (
    applied_dates,
    check_date_order,
    commit_metadata,
    effective_date_text,
    landing_folder,
    previous_state,
    read_extract,
)
from spark_cdc.hash_cdc.guards import check_deletes, check_not_empty
from spark_cdc.hash_cdc.stage import REASON, stage_extract

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


def _flag(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


@dataclass(frozen=True)
class RunSettings:
    """The run's effective date, landing root and overrides (from the dataset's settings)."""

    effective_date: str
    landing_root: str
    force: bool = False
    allow_mass_delete: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> RunSettings:
        """From the dataset's ``hash_cdc`` block: effective_date, landing_root, force and
        allow_mass_delete (rendered from dbt vars, see the dataset's YAML)."""
        if not str(settings.get("landing_root") or "").strip():
            raise ConfigError(f"{settings.get('dataset')}: landing_root is not set")
        return cls(
            effective_date=effective_date_text(settings.get("effective_date")),
            landing_root=str(settings["landing_root"]),
            force=_flag(settings.get("force", False)),
            allow_mass_delete=_flag(settings.get("allow_mass_delete", False)),
        )


def staged_extract(
    spark: SparkSession, config: DatasetConfig, run: RunSettings, current_table: str | None = None
) -> DataFrame:
    """Stage 1 of the run: the extract of ``<landing_root>/<dataset>/<date>/``, staged. An
    effective date older than the latest one applied to ``current_table`` is refused here,
    before anything (this table included) is written."""
    if current_table is not None:
        applied = applied_dates(spark, current_table)
        check_date_order(applied, current_table, run.effective_date, run.force)
    folder = landing_folder(run.landing_root, config.name, run.effective_date)
    raw = read_extract(spark, folder, config, config.file_format)
    return stage_extract(raw, config, run.effective_date)


def current_state(
    spark: SparkSession,
    staged: DataFrame,
    table: str,
    config: DatasetConfig,
    run: RunSettings,
) -> DataFrame:
    """The current table after the run (stages 2-4), once every guard has passed."""
    previous = previous_state(spark, table, run.effective_date, force=run.force)
    quarantined = F.col(REASON).isNotNull()
    totals = staged.agg(
        F.count(F.lit(1)).alias("rows_in"),
        F.count_if(quarantined & F.col("key_hash").isNull()).alias("unidentified"),
    ).first()
    check_not_empty(config, run.effective_date, totals.rows_in, run.allow_mass_delete)
    valid = staged.where(~quarantined)
    if previous is None:
        return apply_extract(valid, None, config, run.effective_date)
    held = staged.where(quarantined & F.col("key_hash").isNotNull()).select("key_hash").distinct()
    # Rows whose key cannot be read might be any missing key: a full extract with such rows
    # proves no key absent, so it deletes nothing (its missing keys are deferred deletes).
    defer_deletes = totals.unidentified > 0
    if config.mode == "full" and not run.allow_mass_delete:
        decided = decide(valid, previous, config, run.effective_date, held, defer_deletes)
        check_deletes(config, run.effective_date, decision_counts(decided), False)
    return apply_extract(valid, previous, config, run.effective_date, held, defer_deletes)


def prepare_current_write(spark: SparkSession, run: RunSettings) -> None:
    """Session settings for the current table's write: its commit records the date, and a new
    table gets the table properties (the model's post-hooks reset both)."""
    spark.conf.set(USER_METADATA, commit_metadata(run.effective_date))
    apply_property_defaults(spark, TABLE_PROPERTIES)
