"""The engine suite (python_tests/engine_suite) on the SQL-only Thrift engine, started from the
pyspark wheel on loopback (a file of its own: each engine suite can run on another test worker)."""

from __future__ import annotations

import pytest
from servers import run_engine_suite, suite_passed

from spark_cdc.engine import server as engine

pytestmark = pytest.mark.cli


def test_the_engine_suite_on_the_thrift_engine(tmp_path):
    engine.start(tmp_path, "thrift")
    try:
        result = run_engine_suite("thrift", tmp_path, SPARK_CDC_TARGET="thrift")
        suite_passed(result)
    finally:
        assert engine.stop(tmp_path, "thrift")
