"""The engine suite (python_tests/engine_suite) on a standalone master + worker, started from the
pyspark wheel on loopback (a file of its own: each engine suite can run on another test worker)."""

from __future__ import annotations

import pytest
from servers import run_engine_suite, standalone_cluster, suite_passed

pytestmark = pytest.mark.cli


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
        summary = suite_passed(result)
    # Hash CDC and docs generate are left to the other engines, the overlapping ledger runs to
    # the warm engine (engine_suite/test_on_engine.py).
    assert "3 deselected" in summary, summary
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
