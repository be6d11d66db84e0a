"""Loads that happen once: Delta's idempotent writes (``txnAppId`` + ``txnVersion``) per table.

A load (a ledger increment, a bronze load, landed files) reads what its table holds, decides
what is new, then appends. Delta never makes two blind appends conflict, so two overlapping
loads of one table (a retried scheduler run, two commands on the warm engine, the stream beside
a ``dbt build``) would both append the same new data. Each load therefore claims the next
number of its table's load sequence, read from the table's history before the load reads the
table: the write carries ``txnAppId`` (the table's load identity), ``txnVersion`` (the number)
and, in its commit's ``userMetadata``, the number again (so the next load can read it). Of two
loads that claimed one number, Delta makes the second either fail at commit (they overlapped:
``ConcurrentTransactionException``, nothing written) or write nothing (the first had committed:
a number at or below the last committed one is skipped); the next run takes what was left.
An empty load commits too, so the sequence moves on with every load, whatever it held.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from spark_cdc.core.delta_commits import writes_rows

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
LOAD_KEY = "spark_cdc_load"
RECEIPT_KEY = "spark_cdc_receipt"
# What Delta's error says when another load of the same identity committed first.
CONFLICT_MARKERS = ("DELTA_CONCURRENT_TRANSACTION", "ConcurrentTransactionException")
_RECENT = 100


def load_identity(kind: str, table: str) -> str:
    """The ``txnAppId`` of ``kind`` loads (ledger, bronze, landing) into ``table``."""
    parts = table.strip().replace("`", "").lower().split(".")
    return f"spark_cdc.{kind}:{'.'.join(parts[-2:])}"  # schema.table, whatever the catalog


def metadata_value(commit: Any, key: str) -> Any:
    """The ``key`` of a history row's ``userMetadata`` JSON (None: absent, or not JSON)."""
    try:
        content = json.loads(commit.userMetadata or "{}")
    except (json.JSONDecodeError, AttributeError):
        return None
    return content.get(key) if isinstance(content, dict) else None


def last_load(spark: Any, table: str) -> int | None:
    """The number of the table's newest load (numbers only grow; None: none yet, or no table).

    Commits a RESTORE reverted count too: the next claim stays above every number Delta may
    still hold for this identity (a claim at or below it would be skipped)."""
    if not spark.catalog.tableExists(table):
        return None
    statement = f"describe history {table}"
    rows = spark.sql(f"{statement} limit {_RECENT}").collect()
    if len(rows) == _RECENT:
        rows = spark.sql(statement).collect()
    for row in sorted(rows, key=lambda commit: commit.version, reverse=True):
        if not writes_rows(row.operation):
            continue
        number = metadata_value(row, LOAD_KEY)
        if number is not None:
            return int(number)
    return None


def next_load(spark: Any, table: str) -> int:
    """The number the table's next load claims."""
    last = last_load(spark, table)
    return 0 if last is None else last + 1


def load_metadata(number: int, receipt: str | None = None) -> str:
    """The ``userMetadata`` of load ``number``'s commit (with this writer's ``receipt``)."""
    content: dict[str, Any] = {LOAD_KEY: number}
    if receipt is not None:
        content[RECEIPT_KEY] = receipt
    return json.dumps(content)


def new_receipt() -> str:
    """A receipt no other write carries: found in the history, it says the write committed."""
    return uuid.uuid4().hex


def carries_receipt(spark: Any, table: str, receipt: str) -> bool:
    """Whether one of the table's latest commits carries ``receipt``: false after a write that
    Delta skipped because another load committed its number first (no error is raised then)."""
    recent = spark.sql(f"describe history {table} limit 20").select("userMetadata").collect()
    return any(metadata_value(row, RECEIPT_KEY) == receipt for row in recent)


def claim_next_write(spark: Any, app_id: str, number: int) -> None:
    """Make this session's next Delta write load ``number`` of ``app_id`` (the model's
    post-hook resets the three settings)."""
    spark.conf.set(TXN_APP_ID, app_id)
    spark.conf.set(TXN_VERSION, str(number))
    spark.conf.set(USER_METADATA, load_metadata(number))


def write_options(app_id: str, number: int, receipt: str | None = None) -> dict[str, str]:
    """The same claim as options of one DataFrame write (``receipt``: see carries_receipt)."""
    metadata = load_metadata(number, receipt)
    return {"txnAppId": app_id, "txnVersion": str(number), "userMetadata": metadata}


# Delta's optimistic-concurrency refusals of a write that a concurrent commit conflicted with.
WRITE_CONFLICT_MARKERS = (
    "DELTA_CONCURRENT_APPEND",
    "DELTA_CONCURRENT_DELETE_READ",
    "DELTA_CONCURRENT_DELETE_DELETE",
    "DELTA_METADATA_CHANGED",
    "DELTA_CONCURRENT_TRANSACTION",
    "DELTA_PROTOCOL_CHANGED",
)


def is_write_conflict(error: BaseException) -> bool:
    """Whether ``error`` is Delta refusing a write that a concurrent commit conflicted with
    (the refused write committed nothing)."""
    text = str(error)
    return any(marker in text for marker in WRITE_CONFLICT_MARKERS)


def is_overlap(error: BaseException) -> bool:
    """Whether ``error`` is Delta refusing a load that another load of its identity beat."""
    text = str(error)
    return any(marker in text for marker in CONFLICT_MARKERS)
