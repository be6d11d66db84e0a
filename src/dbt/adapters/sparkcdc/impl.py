"""The ``sparkcdc`` adapter: dbt-spark's adapter with in-process Python models (session,
connect) and a clear refusal of Python models on SQL-only targets."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import BaseRelation, PythonJobHelper, available
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparkcdc.connections import SparkcdcConnectionManager, SparkcdcConnectionMethod
from dbt.adapters.sparkcdc.python_submissions import (
    SessionPythonJobHelper,
    bind_session,
    left_behind,
)

# Spark's schema tree (what `show table extended` lists for a view or a non-Delta table) names
# four types by their JVM names; DESCRIBE (what a Delta table's columns come from) and SQL name
# them as below. dbt-spark's catalog then called one column type two ways.
SCHEMA_TREE_TYPE_NAMES = {
    "long": "bigint",
    "integer": "int",
    "short": "smallint",
    "byte": "tinyint",
}


class SparkcdcAdapter(SparkAdapter):
    """dbt-spark adapter whose Python models run on the target's Spark session."""

    ConnectionManager = SparkcdcConnectionManager  # type: ignore[assignment]

    @property
    def default_python_submission_method(self) -> str:
        if self.config.credentials.method == SparkcdcConnectionMethod.HTTP:
            return super().default_python_submission_method  # Databricks' own methods
        # session and connect run here; thrift and odbc cannot run Python, and the session
        # helper says so (dbt-spark's default would ask for a Databricks cluster id).
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    def parse_columns_from_information(self, relation: BaseRelation) -> list[SparkColumn]:
        """dbt-spark's columns of a relation's `show table extended` text, each type named as
        DESCRIBE and SQL name it (``bigint``, not the schema tree's ``long``)."""
        columns = super().parse_columns_from_information(relation)
        for column in columns:
            column.dtype = SCHEMA_TREE_TYPE_NAMES.get(column.dtype, column.dtype)
        return columns

    @available
    def spark_location(self, location: str) -> str:
        """A landing location as Spark should read it: a local path made absolute against the
        dbt command's folder (a Connect server would resolve it against its own)."""
        from spark_cdc.core.paths import spark_location

        return spark_location(location)

    @available
    def shared_cache_view(self, key: str) -> str | None:
        """On a Spark Connect engine, the name of a global temporary view, one per ``key``, for
        a relation the run caches (spark_cdc.core.shared_caches): dropped when the connection
        closes, or by a later client once this process is gone. None elsewhere (a temporary
        view of the session is released with it)."""
        handle = self.connections.get_thread_connection().handle
        session = getattr(handle, "session", None)
        if (
            session is None
            or hasattr(session, "_jsparkSession")
            or not hasattr(handle, "hold_view")
        ):
            return None
        from spark_cdc.core.shared_caches import shared_view_name

        name = shared_view_name(key)
        handle.hold_view(name)
        return name

    def submit_python_job(self, parsed_model: dict, compiled_code: str) -> Any:
        """Run the model on its dbt connection's session (see python_submissions)."""
        handle = self.connections.get_thread_connection().handle
        bind_session(getattr(handle, "session", None))
        try:
            return super().submit_python_job(parsed_model, compiled_code)
        finally:
            left = left_behind()
            if left is not None and hasattr(handle, "hold"):
                handle.hold(*left)
