"""Loads that happen once: Delta's idempotent writes (``txnAppId`` + ``txnVersion``) per table.

A load (landed files, a ledger increment, a bronze load) reads what its table holds, decides
what is new, then appends. Delta never makes two blind appends conflict, so two overlapping
loads of one table (a retried scheduler run, two commands on the warm engine, the stream beside
a ``dbt build``) would both append the same new data. Each load therefore claims the next
number of its table's load sequence, read from the same state it decided from: the write
carries ``txnAppId`` (the table's load identity) and ``txnVersion`` (that number). Delta then
makes the second of two loads that claimed one number either fail at commit (they overlapped:
``ConcurrentTransactionException``, nothing written) or write nothing (the first had committed:
a number at or below the last committed one is skipped), and the next run takes what was left.
"""

from __future__ import annotations

from typing import Any

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
# What Delta's error says when another load of the same identity committed first.
CONFLICT_MARKERS = ("DELTA_CONCURRENT_TRANSACTION", "ConcurrentTransactionException")


def load_identity(kind: str, table: str) -> str:
    """The ``txnAppId`` of ``kind`` loads (landing, ledger, bronze) into ``table``."""
    return f"spark_cdc.{kind}:{table.strip().strip('`').lower()}"


def claim_next_write(spark: Any, app_id: str, version: int) -> None:
    """Make this session's next Delta write a load ``version`` of ``app_id`` (the model's
    post-hook, or :func:`release_claim`, clears it)."""
    if version < 0:
        raise ValueError(f"a load number is 0 or more, not {version}")
    spark.conf.set(TXN_APP_ID, app_id)
    spark.conf.set(TXN_VERSION, str(version))


def release_claim(spark: Any) -> None:
    """Clear a claim this session made (no later write of the session carries it)."""
    for key in (TXN_VERSION, TXN_APP_ID):
        spark.conf.unset(key)


def is_overlap(error: BaseException) -> bool:
    """Whether ``error`` is Delta refusing a load that another load of its identity beat."""
    text = str(error)
    return any(marker in text for marker in CONFLICT_MARKERS)
