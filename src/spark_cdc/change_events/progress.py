"""Which ledger batches a change-event table reflects, recorded in its Delta commits.

The history and current models each record, in the ``userMetadata`` of the Delta commit that
writes them, the highest ledger ``_batch_id`` they reflect. The setting is a session's, so any
commit of the session may carry it (an ``ALTER TABLE`` of ``on_schema_change`` or of a
discovered column, before the data is written): only a commit that writes rows
(:mod:`spark_cdc.core.delta_commits`) makes its mark true; the others' marks are ignored. A run then
takes every batch above its table's mark, not only the batches its own ledger run added: a run
killed after the ledger write but before the history (or current) write leaves batches that the
next run picks up, so the tables converge to what an uninterrupted run gives. A run that changes
nothing makes no commit and leaves the mark where it was (the next run looks at those batches
again, harmlessly).
"""

from __future__ import annotations

import json

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from spark_cdc.core.delta_commits import live_marks

PROGRESS_KEY = "spark_cdc_resolved_through_batch"
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
BATCH = "_batch_id"


COMMIT_COLUMNS = ("version", "timestamp", "operation", "operationParameters", "userMetadata")


def commits_of(spark: SparkSession, table: str) -> list[Row] | None:
    """The commits of ``table`` (``describe history`` rows, newest first; COMMIT_COLUMNS), None
    when there is no such table."""
    if not spark.catalog.tableExists(table):
        return None
    return spark.sql(f"describe history {table}").select(*COMMIT_COLUMNS).collect()


def resolved_through(
    spark: SparkSession, table: str, commits: list[Row] | None = None
) -> int | None:
    """The mark of the latest data commit of ``table`` that carries one and that its state still
    holds (a RESTORE undoes the marks of the commits it reverts); None: no mark yet.
    ``commits``: the table's, when the caller has read them (commits_of)."""
    if commits is None:
        commits = commits_of(spark, table)
    live = live_marks(commits or [], mark_of)
    return live[-1][1] if live else None


def mark_of(user_metadata: str | None) -> int | None:
    """The mark a commit's ``userMetadata`` carries (None: none, or not this project's)."""
    try:
        mark = json.loads(user_metadata or "{}").get(PROGRESS_KEY)
    except (json.JSONDecodeError, AttributeError):
        return None
    return None if mark is None else int(mark)


def latest_batch(ledger: DataFrame) -> int | None:
    """The highest batch id of the ledger (None when it is empty)."""
    return ledger.agg(F.max(BATCH)).first()[0]


def record_progress(spark: SparkSession, through: int | None) -> None:
    """Make the next Delta commits of this session carry ``through`` as their mark (the model's
    post-hook resets the setting)."""
    if through is not None:
        spark.conf.set(USER_METADATA, json.dumps({PROGRESS_KEY: int(through)}))


def pending_batches(ledger: DataFrame, through: int | None) -> DataFrame:
    """Ledger rows of the batches above the mark (all rows without a mark)."""
    return ledger if through is None else ledger.where(F.col(BATCH) > F.lit(through))


def pending_process_ids(ledger: DataFrame, through: int | None, process_id: str) -> list[str]:
    """The dbt runs whose history changes the current table may not reflect yet: the runs that
    ledgered the batches above the mark, and this run."""
    rows = pending_batches(ledger, through).select("process_id").distinct().collect()
    return sorted({process_id, *(row.process_id for row in rows)})
