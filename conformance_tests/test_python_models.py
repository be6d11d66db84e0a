"""dbt's Python model classes on the sparkcdc session target (the model runs in the dbt
process's own Spark session)."""

from __future__ import annotations

from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonIncrementalTests,
    BasePythonModelTests,
)


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    pass
