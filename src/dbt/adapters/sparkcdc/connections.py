"""Credentials and connection manager of the ``sparkcdc`` adapter type.

Methods: dbt-spark's ``thrift``, ``http``, ``odbc`` and ``session`` (a Spark session in the dbt
process; ``host`` is its master URL), plus ``connect``: a Spark Connect client of ``host``
(``sc://host:port``; ``token`` and ``use_ssl`` as Spark Connect defines them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.exceptions import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkCredentials,
)
from dbt_common.dataclass_schema import StrEnum

ADAPTER_TYPE = "sparkcdc"


class SparkcdcConnectionMethod(StrEnum):
    THRIFT = "thrift"
    HTTP = "http"
    ODBC = "odbc"
    SESSION = "session"
    CONNECT = "connect"


# Methods whose targets run Python (models and the project's tools) in the dbt process.
PYTHON_METHODS = (SparkcdcConnectionMethod.SESSION, SparkcdcConnectionMethod.CONNECT)


@dataclass
class SparkcdcCredentials(SparkCredentials):
    """dbt-spark credentials with the ``connect`` method."""

    method: SparkcdcConnectionMethod = None  # type: ignore[assignment]

    @property
    def type(self) -> str:
        return ADAPTER_TYPE

    def _connection_keys(self) -> tuple[str, ...]:
        return ("method", *super()._connection_keys())


def target_of(credentials: SparkCredentials) -> Any:
    """The project's view of these credentials (spark_cdc.targets.Target)."""
    from spark_cdc.targets import Target

    return Target(
        name="dbt",
        method=str(credentials.method),
        host=credentials.host or "",
        token=credentials.token,
        port=credentials.port,
        server_side_parameters=credentials.server_side_parameters,
    )


def ensure_session(credentials: SparkCredentials) -> Any:
    """The process's Spark session of the target: the project runtime (method session, built
    once) or the Spark Connect client of the target's URL (method connect)."""
    from spark_cdc.targets import session_for

    return session_for(target_of(credentials))


def home_thrift_credentials(credentials: SparkCredentials) -> SparkCredentials:
    """Thrift credentials with ``host: home-engine`` resolved to this home's Thrift engine
    (started when not running; its own port read from the home); others unchanged."""
    from spark_cdc.targets import HOME_ENGINE, home_engine_state

    if (credentials.host or "").strip() != HOME_ENGINE:
        return credentials
    from spark_cdc.engine.server import LOOPBACK

    state = home_engine_state("thrift")
    return dataclasses.replace(credentials, host=LOOPBACK, port=int(state["port"]))


class SparkcdcConnectionManager(SparkConnectionManager):
    """dbt-spark's connection manager; with session and connect, each connection runs on a
    session of its own derived from the process's session of the target (see connect)."""

    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        method = connection.credentials.method
        if method == SparkcdcConnectionMethod.THRIFT:
            connection.credentials = home_thrift_credentials(connection.credentials)
        if method not in PYTHON_METHODS:
            return super().open(connection)
        try:
            root = ensure_session(connection.credentials)
            from dbt.adapters.sparkcdc.connect import (
                BoundSessionConnectionWrapper,
                connection_session,
            )

            session = connection_session(root, connection.credentials.server_side_parameters or {})
        except Exception as error:
            raise FailedToConnectError(str(error)) from error
        connection.handle = BoundSessionConnectionWrapper(session)
        connection.state = ConnectionState.OPEN
        return connection
