"""Which Delta commits write a table's rows (marks in ``userMetadata`` are trusted on those only).

A Spark session's ``spark.databricks.delta.commitInfo.userMetadata`` goes into every commit the
session makes while it is set, DDL included: dbt's ``on_schema_change`` or a discovered column's
``ALTER TABLE`` can commit, carrying a mark, before the model's rows are written. A mark is made
true by the commit that writes the rows, so readers of marks look at these commits only.
"""

from __future__ import annotations

# A model's first build or full refresh, and its incremental writes. DDL (ADD COLUMNS, CHANGE
# COLUMN, SET TBLPROPERTIES, ...), OPTIMIZE, VACUUM and RESTORE change no row of their own.
DATA_OPERATIONS = frozenset(
    {
        "WRITE",
        "MERGE",
        "CREATE TABLE AS SELECT",
        "REPLACE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE AS SELECT",
    }
)


def writes_rows(operation: str | None) -> bool:
    """Whether a commit of this Delta ``operation`` wrote the table's rows."""
    return operation in DATA_OPERATIONS
