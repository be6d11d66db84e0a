"""What a dbt Python model of this project reads from its run's context."""

from __future__ import annotations

from pyspark.sql import SparkSession

PROCESS_ID_CONF = "spark_cdc.process_id"
# The relation whose incremental run has nothing to write: set by its Python model, read and
# reset by the sparkcdc adapter's incremental materialization, which then runs no write.
NOTHING_TO_WRITE_CONF = "spark_cdc.nothing_to_write"


class MissingProcessIdError(RuntimeError):
    """A model that stamps rows with the run's id ran without its pre-hook."""


def process_id(session: SparkSession) -> str:
    """The dbt invocation_id, set by the model's pre-hook ``set spark_cdc.process_id = ...``."""
    value = session.conf.get(PROCESS_ID_CONF, None)
    if not value:
        raise MissingProcessIdError(
            f"{PROCESS_ID_CONF} is not set: the model needs the pre-hook "
            '"set spark_cdc.process_id = {{ invocation_id }}" (dbt_project.yml)'
        )
    return value.strip()


def nothing_to_write(session: SparkSession, relation: str) -> None:
    """Tell the sparkcdc materialization that this run of ``relation`` adds nothing: it skips
    the insert or MERGE (no empty Delta commit)."""
    session.conf.set(NOTHING_TO_WRITE_CONF, relation)
