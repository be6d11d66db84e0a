"""The engine suite (python_tests/engine_suite) on the SQL-only Thrift engine and on a standalone
master + worker, each started from the pyspark wheel on loopback (a file of its own so that
these run on another test worker than the warm Connect engine's)."""

from __future__ import annotations

import pytest
from servers import run_engine_suite, standalone_cluster, suite_passed

from spark_cdc import engine

pytestmark = pytest.mark.cli


def test_the_engine_suite_on_the_thrift_engine(tmp_path):
    engine.start(tmp_path, "thrift")
    try:
        result = run_engine_suite("thrift", tmp_path, SPARK_CDC_TARGET="thrift")
        suite_passed(result)
    finally:
        assert engine.stop(tmp_path, "thrift")


def test_the_engine_suite_on_a_standalone_cluster(tmp_path):
    with standalone_cluster(tmp_path) as master:
        result = run_engine_suite(
            "cluster",
            tmp_path / "home",
            SPARK_CDC_TARGET="cluster",
            SPARK_CDC_MASTER=master,
            SPARK_CDC_DRIVER_HOST="127.0.0.1",
            SPARK_CDC_DRIVER_BIND_ADDRESS="127.0.0.1",
            SPARK_CDC_DRIVER_MEMORY="2g",
            SPARK_CDC_EXECUTOR_MEMORY="1g",
        )
        suite_passed(result)
    # Executors ran, and their command lines carry no path of the driver's machine.
    launches = [
        line
        for line in (tmp_path / "worker.log").read_text(errors="replace").splitlines()
        if "Launch command" in line
    ]
    assert launches
    for line in launches:
        assert str(tmp_path / "home") not in line and "derby.system.home" not in line, line
        assert "log4j.configurationFile" not in line, line
