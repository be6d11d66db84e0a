"""The ``connect`` method: dbt's SQL over a Spark Connect session.

The session is the process's Spark Connect client of the target's URL (shared by the SQL
connection and the Python models, so a ``set`` in a pre-hook is seen by the model's code).
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError


class ConnectCursor(Cursor):
    """dbt-spark's session cursor, running its statements on a given (Connect) session."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self._session = session

    def execute(self, sql: str, *parameters: Any) -> None:
        from pyspark.errors import PySparkException

        if parameters:
            sql = sql % parameters
        try:
            self._df = self._session.sql(sql)
        except PySparkException as error:
            raise DbtRuntimeError(str(error)) from error


class ConnectHandle:
    """A connection handle whose cursors run on one Spark Connect session."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def cursor(self) -> ConnectCursor:
        return ConnectCursor(self.session)


class ConnectConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session connection wrapper over a Spark Connect session."""

    def __init__(self, session: Any) -> None:
        super().__init__(ConnectHandle(session))  # type: ignore[arg-type]
