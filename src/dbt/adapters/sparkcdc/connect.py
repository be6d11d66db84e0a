"""dbt's SQL over a Spark session object: a session of this process or a Spark Connect client.

Each dbt connection (one per dbt thread and node) gets a session of its own, derived from the
process's session of the target (:func:`connection_session`): SQL settings (``set`` in a hook, a
Delta commit's ``userMetadata``), temporary views and the model's Python code stay with the node
that made them, so nodes running side by side with ``threads: 4`` never see each other's
settings. Tables, the metastore and cached data are shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError


def connection_session(root: Any, server_side_parameters: Mapping[str, str]) -> Any:
    """A new session sharing ``root``'s engine and catalog, with its own SQL settings."""
    if hasattr(root, "_jsparkSession"):  # a session of this process: same SparkContext
        session = root.newSession()
    else:  # a Spark Connect client: a new server-side session, same server and token
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        session = ConnectSession.builder.channelBuilder(root.client._builder).create()
    for key, value in server_side_parameters.items():
        try:
            session.conf.set(key, value)
        except Exception:  # a static setting: fixed when the engine started
            continue
    return session


class BoundCursor(Cursor):
    """dbt-spark's session cursor, running its statements on a given session."""

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


class BoundHandle:
    """A connection handle whose cursors run on one session."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def cursor(self) -> BoundCursor:
        return BoundCursor(self.session)


class BoundSessionConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session connection wrapper over one given session."""

    def __init__(self, session: Any) -> None:
        super().__init__(BoundHandle(session))  # type: ignore[arg-type]

    @property
    def session(self) -> Any:
        return self.handle.session
