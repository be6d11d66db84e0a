"""Which rows a model's write changed, recorded in its Delta commit for the model's data tests.

A model's incremental write can record, in the ``userMetadata`` of its commit, a lower bound of
one column over every row the write changed (``{"spark_cdc_changed_from": {"valid_to": ...}}``).
A data test whose ``where`` holds ``__spark_cdc_changed_rows__`` (macros/tests/
changed_rows.sql) then reads only those rows, and Delta skips the files below the bound: a run's
tests read what the run changed, not the table's age. A first build records nothing: its tests
read everything.
"""

from __future__ import annotations

import json
from typing import Any

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
CHANGED_FROM_KEY = "spark_cdc_changed_from"


def record_changed_from(spark: Any, column: str, lowest: Any) -> None:
    """Add to the ``userMetadata`` this session's next commits carry: every row the write
    changes has ``column`` >= ``lowest`` (an int, or a timestamp as text). Keeps what the
    setting holds already (a load number, a progress mark); the model's post-hook resets it."""
    text = spark.conf.get(USER_METADATA, None)
    record = json.loads(text) if text else {}
    record[CHANGED_FROM_KEY] = {column: lowest if isinstance(lowest, int) else str(lowest)}
    spark.conf.set(USER_METADATA, json.dumps(record))
