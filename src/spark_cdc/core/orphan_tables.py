"""Tables whose first commit landed but whose catalog entry did not.

Creating a managed Delta table writes its first commit, then registers the table in the
metastore. A run killed between the two leaves an orphan: a Delta table at the table's managed
location that the catalog does not know. Delta then refuses ``CREATE TABLE`` and a first append
there ("location is not empty"), so every rerun would fail. Code that creates a table of its
own asks :func:`has_orphan` first and replaces the orphan (``CREATE OR REPLACE``): the orphan's
commit was never visible, its run redoes that work, and the replaced version stays in the
table's Delta history.
"""

from __future__ import annotations

import time

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType


def _parts(table: str) -> tuple[str | None, str]:
    names = [part.strip("`") for part in table.split(".")]
    return (names[-2] if len(names) > 1 else None), names[-1]


def managed_location(spark: SparkSession, table: str) -> str | None:
    """Where the catalog would put ``table`` as a managed table (its database's location and
    its lower-case name), or None when the database does not say."""
    database, name = _parts(table)
    database = database or spark.catalog.currentDatabase()
    rows = spark.sql(f"describe database `{database}`").collect()
    location = next((row[1] for row in rows if str(row[0]).lower() == "location"), None)
    return None if not location else f"{str(location).rstrip('/')}/{name.lower()}"


def has_orphan(spark: SparkSession, table: str) -> bool:
    """True when ``table`` is not in the catalog but a Delta table sits at its managed location."""
    if spark.catalog.tableExists(table):
        return False
    location = managed_location(spark, table)
    if location is None:
        return False
    try:
        spark.sql(f"describe detail delta.`{location}`").collect()
    except Exception:  # no Delta table there (or no such folder): nothing to take over
        return False
    return True


_EXISTS_MARKERS = ("TABLE_OR_VIEW_ALREADY_EXISTS", "already exists")
# Delta's refusal of the second of two creates of one new table (both wrote a first commit to
# the empty directory).
_CREATED_MEANWHILE = ("DELTA_PROTOCOL_CHANGED", "DELTA_METADATA_CHANGED")
_REGISTER_WAIT_SECONDS = 30.0


def _registered_within(spark: SparkSession, table: str, seconds: float) -> bool:
    """Whether the catalog has ``table`` within ``seconds`` (asked every quarter second)."""
    deadline = time.monotonic() + seconds
    while not spark.catalog.tableExists(table):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.25)
    return True


def create_empty(spark: SparkSession, table: str, schema: StructType | str) -> None:
    """Create ``table`` as an empty Delta table of ``schema`` unless the catalog has it.

    A table's first rows then go in an append of their own, after its catalog entry exists:
    a kill can orphan only this empty commit, never a load (a load's ``txnAppId`` kept in an
    orphan's log would make Delta skip the rerun's same load on the replaced table). An orphan
    is replaced; a create that another run finished first is left as that run made it."""
    if spark.catalog.tableExists(table):
        return
    empty = spark.createDataFrame([], schema)
    writer = empty.writeTo(table).using("delta")
    try:
        if has_orphan(spark, table):
            if "timestamp_ntz" in empty.schema.simpleString():
                # A new table turns the feature on by itself; a replaced one must be told.
                writer = writer.tableProperty("delta.feature.timestampNtz", "supported")
            writer.createOrReplace()
        else:
            writer.create()
    except Exception as error:
        if any(marker in str(error) for marker in _EXISTS_MARKERS):
            return
        if not any(marker in str(error) for marker in _CREATED_MEANWHILE):
            raise
        # Another run's create of an empty directory committed first; it registers the table
        # in the catalog right after its commit.
        if not _registered_within(spark, table, _REGISTER_WAIT_SECONDS):
            raise
