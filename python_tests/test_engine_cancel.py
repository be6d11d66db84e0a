"""Ctrl-C on a dbt command stops its work on the engine: the adapter's cancel interrupts the
connection's Spark Connect session (the server would otherwise keep running the MERGE its
client left)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from servers import PROJECT_DIR
from support import BIN

from spark_cdc.engine import server as engine

pytestmark = pytest.mark.cli

# An incremental model whose second run MERGEs a source that takes minutes to compute (a hash of
# every one of 5e10 generated ids), so the MERGE is still running when Ctrl-C comes.
SLOW_MERGE = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id') }}
{% if is_incremental() %}
select id, 'merged' as v from range(0, 50000000000) where hash(id) = 7
{% else %}
select id, 'first' as v from range(0, 3)
{% endif %}
"""

READ_BACK = """
import sys
from pyspark.sql.connect.session import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).create()
print(sorted(tuple(r) for r in spark.sql("select id, v from cancel_probe.slow_merge").collect()))
print([r.operation for r in spark.sql("describe history cancel_probe.slow_merge").collect()])
"""


def _project(folder: Path) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(
        "name: cancel_probe\nversion: '1.0'\nconfig-version: 2\nprofile: spark_cdc\n"
        "models:\n  cancel_probe:\n    +file_format: delta\n    +schema: probe\n"
    )
    (folder / "macros").mkdir()
    (folder / "macros" / "schema.sql").write_text(
        "{% macro generate_schema_name(custom, node) %}cancel_probe{% endmacro %}\n"
    )
    (folder / "models" / "slow_merge.sql").write_text(SLOW_MERGE)
    return folder


def _server_cpu(pid: int, seconds: float = 4.0) -> float:
    """CPU the engine's server used over ``seconds``, in percent of one core."""
    return psutil.Process(pid).cpu_percent(interval=seconds)


def _engine_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARK_CDC_")}
    env.update(
        SPARK_CDC_HOME=str(home),
        SPARK_CDC_TARGET="engine",
        DBT_PROFILES_DIR=str(PROJECT_DIR / "profiles"),
        PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
    )
    return env


def _second_run_started(project: Path, env: dict[str, str], kind: str):
    """`dbt run` of ``project`` once to the end, then again until its model starts (``kind``:
    sql or python); returns the second run's process and the lines it printed so far."""
    command = ["dbt", "run", "--project-dir", str(project)]
    first = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    assert first.returncode == 0, first.stdout[-3000:]
    running = subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    seen = []
    for line in running.stdout:
        seen.append(line)
        if f"START {kind} incremental model" in line:
            break
    return running, seen


def test_ctrl_c_on_a_dbt_command_stops_its_merge_on_the_engine(tmp_path):
    home = tmp_path / "home"
    project = _project(tmp_path / "probe")
    env = _engine_env(home)
    state = engine.start(home)
    try:
        running, seen = _second_run_started(project, env, "sql")
        deadline = time.monotonic() + 120
        while _server_cpu(state["server_pid"], 2) < 100:  # the MERGE is running
            assert time.monotonic() < deadline, "".join(seen)
        running.send_signal(signal.SIGINT)
        rest = running.communicate(timeout=180)[0]
        assert running.returncode != 0, rest
        # The server stopped the MERGE: it is idle again, and the table is as before.
        deadline = time.monotonic() + 30
        while (busy := _server_cpu(state["server_pid"])) > 40:
            assert time.monotonic() < deadline, f"the server still works ({busy:.0f}% CPU)"
        read = subprocess.run(
            [sys.executable, "-c", READ_BACK, engine.Engine(home).url(state["port"])],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        rows, history = read.stdout.strip().splitlines()
        assert rows == "[(0, 'first'), (1, 'first'), (2, 'first')]", read.stderr[-2000:]
        assert "MERGE" not in history
    finally:
        engine.stop(home)


# A Python model whose second run works on the client for a while (as a model's own Python
# code does between its Spark operations) and then writes: Ctrl-C in between must stop it too.
SLOW_PYTHON = """
import time


def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id", incremental_strategy="merge")
    if dbt.is_incremental:
        time.sleep(40)
        return session.range(0, 3).selectExpr("id", "'merged' as v")
    return session.range(0, 3).selectExpr("id", "'first' as v")
"""

READ_PYTHON_BACK = READ_BACK.replace("slow_merge", "slow_python")


def test_ctrl_c_on_a_python_model_stops_it_before_it_writes(tmp_path):
    """Ctrl-C while a Python model's code runs on the client: the model writes nothing (its
    connection's Spark Connect session is closed, so its next operation fails)."""
    home = tmp_path / "home"
    project = _project(tmp_path / "probe")
    (project / "models" / "slow_merge.sql").unlink()
    (project / "models" / "slow_python.py").write_text(SLOW_PYTHON)
    env = _engine_env(home)
    state = engine.start(home)
    try:
        running, seen = _second_run_started(project, env, "python")
        time.sleep(8)  # inside the model's code
        running.send_signal(signal.SIGINT)
        rest = running.communicate(timeout=180)[0]
        output = "".join(seen) + rest
        assert running.returncode != 0, output
        assert "OK created python incremental model" not in output, output
        assert (
            "cancel_probe.slow_python: cancelled (Ctrl-C): its Spark operations were "
            "interrupted" in output
        ), output
        assert "NO_ACTIVE_SESSION" not in output, output
        time.sleep(40)  # past the model's sleep: a model left running would have written by now
        read = subprocess.run(
            [sys.executable, "-c", READ_PYTHON_BACK, engine.Engine(home).url(state["port"])],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        rows, history = read.stdout.strip().splitlines()
        assert rows == "[(0, 'first'), (1, 'first'), (2, 'first')]", read.stderr[-2000:]
        assert "MERGE" not in history
    finally:
        engine.stop(home)
