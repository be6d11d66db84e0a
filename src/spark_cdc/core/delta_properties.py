"""Table properties that a dbt Python model's new Delta table gets, through session defaults."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession

PREFIX = "spark.databricks.delta.properties.defaults."


def property_defaults(properties: Mapping[str, str]) -> dict[str, str]:
    """Session settings under which Delta gives new tables ``properties`` (a dbt Python model
    cannot pass table properties to the write dbt makes of its result)."""
    return {PREFIX + name.removeprefix("delta."): value for name, value in properties.items()}


def apply_property_defaults(spark: SparkSession, properties: Mapping[str, str]) -> None:
    """Give the tables this session creates next ``properties`` (the model's post-hook resets
    the settings: ``reset spark.databricks.delta.properties.defaults.<name>``)."""
    for setting, value in property_defaults(properties).items():
        spark.conf.set(setting, value)
