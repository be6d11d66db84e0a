"""The interpreter of a session's Python workers (UDFs, pandas functions, foreachBatch): a local
master's run this process's own, not whatever ``python3`` comes first on the PATH."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support import command_env, run_command

from spark_cdc.session.runtime import python_worker_environment

WORKER_EXECUTABLE = """
import sys
from pyspark.sql import functions as F
from spark_cdc.session.runtime import get_or_create_session

spark = get_or_create_session()
where = F.udf(lambda _: sys.executable)
print("WORKER", spark.range(1).select(where("id")).first()[0])
print("DRIVER", sys.executable)
"""


@pytest.mark.parametrize(
    ("master", "environ", "expected"),
    [
        ("local[2]", {}, {"PYSPARK_PYTHON": sys.executable}),
        ("local-cluster[2,1,1024]", {}, {"PYSPARK_PYTHON": sys.executable}),
        ("local[2]", {"PYSPARK_PYTHON": "/opt/python3.12"}, {}),
        ("spark://10.0.0.5:7077", {}, {}),
    ],
)
def test_a_local_masters_workers_run_this_interpreter_unless_pyspark_python_is_set(
    master, environ, expected
):
    assert python_worker_environment(master, environ) == expected


def test_python_workers_run_the_sessions_own_interpreter_whatever_python3_the_path_has(tmp_path):
    # A newcomer runs .venv/bin/spark-cdc without activating the venv: the first python3 on the
    # PATH is another interpreter (here the venv's base interpreter, without the venv's packages).
    other = tmp_path / "other_bin"
    other.mkdir()
    (other / "python3").symlink_to(Path(sys._base_executable).resolve())
    env = command_env(tmp_path / "home", SPARK_CDC_TARGET="local")
    env.pop("PYSPARK_PYTHON", None)
    env["PATH"] = f"{other}{os.pathsep}{env['PATH']}"
    script = tmp_path / "worker_executable.py"
    script.write_text(WORKER_EXECUTABLE)
    done = run_command([sys.executable, str(script)], env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert found["WORKER"] == found["DRIVER"] == sys.executable
