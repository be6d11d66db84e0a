"""Credentials and connection manager of the ``sparkcdc`` adapter type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)

ADAPTER_TYPE = "sparkcdc"


@dataclass
class SparkcdcCredentials(SparkCredentials):
    """dbt-spark credentials; with ``method: session`` the ``host`` is the Spark master URL."""

    @property
    def type(self) -> str:
        return ADAPTER_TYPE


def ensure_session(credentials: SparkCredentials) -> Any:
    """Start (or reuse) the process's SparkSession with the project runtime settings."""
    from spark_cdc.runtime import get_or_create_session

    master = credentials.host if credentials.host and credentials.host != "localhost" else None
    return get_or_create_session(master=master, extra=credentials.server_side_parameters)


class SparkcdcConnectionManager(SparkConnectionManager):
    """dbt-spark's connection manager; the session method first builds the project runtime."""

    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == "open":
            return connection
        if connection.credentials.method == SparkConnectionMethod.SESSION:
            ensure_session(connection.credentials)
        return super().open(connection)
