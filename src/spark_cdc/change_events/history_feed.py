"""The history versions that runs after a mark wrote, read from the history's Change Data Feed.

The history table keeps Delta's Change Data Feed (``delta.enableChangeDataFeed``): each MERGE
writes the rows it inserted and the images of the rows it updated to files of their own. A table
built from the history (the current state, the run summary) reads the versions written since
its own mark there instead of scanning the history's open versions: a MERGE rewrites every file
it touches, so after a run's MERGE nearly every file of the open partition mixes the new
versions with old ones and no file statistic can skip them.

The history's data commits carry the highest ledger batch they reflect (progress). A reader
whose mark is ``through`` reflects the history up to its latest row write with a mark of
``through`` or below (its point): the versions written since are those of every commit after
that point, read from the feed from there to the latest commit. Each version's latest image in
that range is its state now, or gone (a history on tracked columns deletes the versions a late
event merged into an earlier one, which is then the current one). The feed answers only when
every commit since the point is a MERGE or WRITE of rows, or an OPTIMIZE (which changes no row),
and the feed is on: a full refresh, a RESTORE, a schema or property change since the point (the
feed's own switching on included), a commit since that is about as old as the table's file
retention (VACUUM may have removed its feed files), or a history without the feed, make the
caller read the history instead, for that run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from pyspark.sql import DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F

from spark_cdc.change_events.progress import commits_of, mark_of
from spark_cdc.core.delta_commits import live_marks

FEED_PROPERTY = "delta.enableChangeDataFeed"
RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
DEFAULT_RETENTION = "interval 7 days"  # Delta's default
# VACUUM may remove a feed file once it is older than the retention: a range that starts
# within this margin of it is read from the history instead.
RETENTION_MARGIN = timedelta(hours=1)
# Commits a feed range may hold: row writes whose feed Delta keeps, and a compaction.
FEED_OPERATIONS = frozenset({"MERGE", "WRITE", "OPTIMIZE"})
_IMAGES = ("insert", "update_postimage", "delete")
_INTERVAL = re.compile(r"^\s*interval\s+(\d+)\s+(second|minute|hour|day|week)s?\s*$")


def table_properties(spark: SparkSession, table: str) -> dict[str, str]:
    """``table``'s properties (metadata only: no scan)."""
    return {row.key: row.value for row in spark.sql(f"show tblproperties {table}").collect()}


def feed_enabled(spark: SparkSession, table: str) -> bool:
    """Whether ``table`` keeps Delta's Change Data Feed."""
    found = table_properties(spark, table)
    return str(found.get(FEED_PROPERTY, "false")).lower() == "true"


def retention(text: str | None) -> timedelta:
    """A ``delta.deletedFileRetentionDuration`` (``interval 7 days``) as a duration; Delta's
    default when unset; none at all (every range too old) when it cannot be read."""
    found = _INTERVAL.match((text or DEFAULT_RETENTION).lower())
    if found is None:
        return timedelta(0)
    return timedelta(**{f"{found[2]}s": int(found[1])})


def oldest_readable(properties: dict[str, str], now: datetime) -> datetime:
    """The oldest commit time whose feed files VACUUM cannot have removed by ``now`` (UTC)."""
    return now - retention(properties.get(RETENTION_PROPERTY)) + RETENTION_MARGIN


def enable_feed(spark: SparkSession, table: str) -> None:
    """Turn the Change Data Feed on for ``table`` when it is off (one metadata commit, once)."""
    if not feed_enabled(spark, table):
        spark.sql(f"alter table {table} set tblproperties ('{FEED_PROPERTY}' = 'true')")


def feed_range(
    commits: list, through: int | None, oldest: datetime | None = None
) -> tuple[int, int] | bool | None:
    """(first, last) versions of ``commits`` (``describe history`` rows) written after the
    reader's point, the latest row write whose mark is ``through`` or below; False when no
    write above the mark came since; None when the feed cannot answer: no mark, no such point,
    a commit since that is not a plain row write (a RESTORE, a schema or property change, a
    full refresh), or one made before ``oldest`` (its feed files may be vacuumed)."""
    if through is None or not commits:
        return None
    live = live_marks(commits, mark_of)
    if not any(mark > through for _, mark in live):
        return False
    reflected = [version for version, mark in live if mark <= through]
    if not reflected:
        return None
    since = [row for row in commits if row.version > max(reflected)]
    if any(row.operation not in FEED_OPERATIONS for row in since):
        return None
    if oldest is not None and any(row.timestamp < oldest for row in since):
        return None
    return min(row.version for row in since), max(row.version for row in since)


def versions_since(
    spark: SparkSession,
    history: str,
    keys: Sequence[str],
    through: int | None,
    commits: list[Row] | None = None,
) -> DataFrame | None:
    """The history rows that the commits after the mark ``through`` wrote, each in its state
    now (``keys`` + version_id identify a version); None when the feed cannot answer.
    ``commits``: the history's (progress.commits_of), when the caller has read them."""
    if commits is None:
        commits = commits_of(spark, history)
    if commits is None:
        return None
    properties = table_properties(spark, history)
    if str(properties.get(FEED_PROPERTY, "false")).lower() != "true":
        return None
    now = datetime.now(UTC).replace(tzinfo=None)  # history times are zone-less UTC
    found = feed_range(commits, through, oldest_readable(properties, now))
    if found is None:
        return None
    table = spark.table(history)
    if found is False:
        return table.limit(0)
    first, last = found
    changes = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", first)
        .option("endingVersion", last)
        .table(history)
        .where(F.col("_change_type").isin(*_IMAGES))
    )
    latest = Window.partitionBy(*keys, "version_id").orderBy(F.col("_commit_version").desc())
    return (
        changes.withColumn("_latest", F.row_number().over(latest))
        .where((F.col("_latest") == 1) & (F.col("_change_type") != "delete"))
        .select(*table.columns)
    )
