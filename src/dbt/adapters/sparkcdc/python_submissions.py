"""Run dbt Python models in-process on the target's Spark session (methods session, connect)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkcdc.connections import PYTHON_METHODS, ensure_session

PYTHON_TARGETS_HINT = (
    "Python models run on targets with method session (the embedded runtime, a cluster's "
    "driver) or connect (the warm engine, a Spark Connect server), or on Databricks (http)"
)


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
        spark = ensure_session(self.credentials)
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        namespace: dict[str, Any] = {"spark": spark, "__name__": f"dbt_python_model.{name}"}
        exec(compile(compiled_code, f"<dbt python model {name}>", "exec"), namespace)
        return None
