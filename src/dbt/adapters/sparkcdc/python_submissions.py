"""Run dbt Python models in-process on the adapter's SparkSession (method ``session``)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkcdc.connections import ensure_session


class SessionPythonJobHelper(PythonJobHelper):
    """Execute the compiled model code with the global ``spark`` that dbt-spark's code expects."""

    def __init__(self, parsed_model: dict, credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials
        if credentials.method != "session":
            raise DbtRuntimeError(
                "submission_method 'session' needs a profile target with method: session "
                f"(this target uses method: {credentials.method})"
            )

    def submit(self, compiled_code: str) -> Any:
        spark = ensure_session(self.credentials)
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        namespace: dict[str, Any] = {"spark": spark, "__name__": f"dbt_python_model.{name}"}
        exec(compile(compiled_code, f"<dbt python model {name}>", "exec"), namespace)
        return None
