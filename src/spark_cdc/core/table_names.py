"""The table a DataFrame reads, when it is a plain read of one (``spark.table``, a dbt ``ref``).

A dbt Python model gets its refs as DataFrames, not names; the models that read a table's
Delta log or Change Data Feed need the name. PySpark has no public accessor for it: the plan is
asked (a Connect DataFrame keeps the name it was read by, a classic one's analyzed plan starts
with the table's alias), and anything else answers None so that callers take their plain path.
"""

from __future__ import annotations

from pyspark.sql import DataFrame


def table_name(frame: DataFrame) -> str | None:
    """The name of the table ``frame`` reads as a whole, or None when it is anything else."""
    plan = getattr(frame, "_plan", None)
    if plan is not None:  # Spark Connect
        if type(plan).__name__ == "Read":
            return getattr(plan, "table_name", None)
        return None
    try:
        analyzed = frame._jdf.queryExecution().analyzed()
        if analyzed.getClass().getSimpleName() != "SubqueryAlias":
            return None
        return str(analyzed.identifier().toString())
    except Exception:
        return None
