"""The ``sparkcdc`` adapter: dbt-spark's adapter with the in-process ``session`` Python method."""

from __future__ import annotations

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparkcdc.connections import SparkcdcConnectionManager
from dbt.adapters.sparkcdc.python_submissions import SessionPythonJobHelper


class SparkcdcAdapter(SparkAdapter):
    """dbt-spark adapter whose Python models run on the local/cluster session by default."""

    ConnectionManager = SparkcdcConnectionManager  # type: ignore[assignment]

    @property
    def default_python_submission_method(self) -> str:
        if self.config.credentials.method == SparkConnectionMethod.SESSION:
            return "session"
        return super().default_python_submission_method

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}
