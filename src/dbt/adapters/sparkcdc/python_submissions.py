"""Run dbt Python models in-process on the target's Spark session (methods session, connect).

The model runs on the session of its dbt connection (its pre-hooks' ``set`` statements are
seen, and its settings stay its own), with ``spark_cdc.process_id`` set to the run's
invocation_id, inside a cache scope of its own (spark_cdc.core.cache_slots); the scope and what the
model's code made are held by the connection until the node ends (connect.py).
"""

from __future__ import annotations

import threading
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkcdc.connect import active_on_this_thread, was_cancelled
from dbt.adapters.sparkcdc.connections import PYTHON_METHODS, ensure_session

PYTHON_TARGETS_HINT = (
    "Python models run on targets with method session (the embedded runtime, a cluster's "
    "driver) or connect (the warm engine, a Spark Connect server), or on Databricks (http)"
)
_bound = threading.local()
logger = AdapterLogger("Spark")


def bind_session(session: Any) -> None:
    """The session the next Python model of this thread runs on (its dbt connection's)."""
    _bound.session = session
    _bound.left = None


def left_behind() -> tuple[str, Any] | None:
    """The last Python model's cache scope and namespace on this thread (once)."""
    left, _bound.left = getattr(_bound, "left", None), None
    return left


class SessionPythonJobHelper(PythonJobHelper):
    """Execute the compiled model code with the global ``spark`` that dbt-spark's code expects."""

    def __init__(self, parsed_model: dict, credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials
        if credentials.method not in PYTHON_METHODS:
            raise DbtRuntimeError(
                f"{parsed_model.get('name', 'this model')}: a Python model cannot run on a "
                f"target with method {credentials.method}. {PYTHON_TARGETS_HINT}."
            )

    def submit(self, compiled_code: str) -> Any:
        from dbt_common.invocation import get_invocation_id

        from spark_cdc.core.cache_slots import enter_scope
        from spark_cdc.core.dbt_context import PROCESS_ID_CONF

        spark = getattr(_bound, "session", None) or ensure_session(self.credentials)
        _bound.session = None
        spark.conf.set(PROCESS_ID_CONF, get_invocation_id())
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        namespace: dict[str, Any] = {"spark": spark, "__name__": f"dbt_python_model.{name}"}
        scope = f"{name}:{get_invocation_id()}"
        _bound.left = (scope, namespace)
        try:
            with enter_scope(scope), active_on_this_thread(spark):
                exec(compile(compiled_code, f"<dbt python model {name}>", "exec"), namespace)
        except Exception:
            if was_cancelled(spark):
                # dbt prints no node's error after Ctrl-C: say it here, once.
                message = (
                    f"{name}: cancelled (Ctrl-C): its Spark operations were interrupted (a "
                    "Delta write it had not committed is not written)"
                )
                logger.info(message)
                raise DbtRuntimeError(message) from None
            raise
        return None
