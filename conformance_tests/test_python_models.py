"""dbt's Python model classes on the sparkcdc session target (the model runs in the dbt
process's own Spark session)."""

from __future__ import annotations

from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonIncrementalTests,
    BasePythonModelTests,
)
from dbt.tests.adapter.python_model.test_spark import BasePySparkTests
from dbt.tests.util import run_dbt


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    pass


class TestPySpark(BasePySparkTests):
    def test_different_dataframes(self, project) -> None:
        """A model may return a pandas, a PySpark or a pandas-on-Spark DataFrame (dbt-spark's
        variant: koalas, the pre-Spark 3.2 pandas-on-Spark, is not installed anywhere)."""
        results = run_dbt(["run", "--exclude", "koalas_df"])
        assert len(results) == 3
