"""The feed's grouping table: the event groups its silver queries were started with.

Written once, by the first group to start (an idempotent append: of two groups that start at
once, Delta keeps one write); every later start compares its grouping with it and is refused on
a difference, and the ungrouped silver writers are refused while it exists
(:mod:`spark_cdc.schema_drift.event_groups`).
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from spark_cdc.core.orphan_tables import create_empty
from spark_cdc.schema_drift.event_groups import Grouping, GroupingError

SCHEMA = "position int, group_name string, selector string"
_APP_ID = "spark_cdc.schema_drift.event_groups"


def recorded_grouping(spark: SparkSession, table: str) -> Grouping | None:
    """The grouping recorded in ``table``, None when there is none."""
    if not spark.catalog.tableExists(table):
        return None
    rows = [tuple(row) for row in spark.table(table).collect()]
    return Grouping.from_rows(rows) if rows else None


def record_grouping(spark: SparkSession, table: str, grouping: Grouping) -> None:
    """Record ``grouping`` unless one is; refuse a grouping other than the recorded one."""
    if recorded_grouping(spark, table) is None:
        create_empty(spark, table, SCHEMA)
        rows = spark.createDataFrame(grouping.as_rows(), SCHEMA)
        writer = rows.write.format("delta").mode("append")
        try:
            writer.option("txnAppId", _APP_ID).option("txnVersion", 0).saveAsTable(table)
        except Exception as error:  # a group that started at the same time recorded first
            if "ConcurrentTransaction" not in str(error):
                raise
    found = recorded_grouping(spark, table)
    if found != grouping:
        raise GroupingError(
            f"the feed's event groups were started as {_said(found)}, not {_said(grouping)}: "
            "stop every group and refresh silver in full to change them"
        )


def refuse_ungrouped(spark: SparkSession, table: str, writer: str) -> None:
    """Refuse an ungrouped silver writer (``writer`` says which) of a grouped feed."""
    found = recorded_grouping(spark, table)
    if found is not None:
        raise GroupingError(
            f"{writer}: this feed's silver is written by its event groups ({_said(found)}, "
            f"recorded in {table}); run each group (spark-cdc stream schema-drift FEED --group "
            "NAME), not the whole feed"
        )


def _said(grouping: Grouping | None) -> str:
    if grouping is None:
        return "none"
    return "; ".join(f"{g.name}={','.join(g.selectors)}" for g in grouping.groups)
