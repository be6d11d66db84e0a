"""The plain ``dbt`` command line on the local target, one process per command.

Each command is a separate process with its own JVM: tables must survive through the persistent
Delta warehouse and Derby metastore under SPARK_CDC_HOME.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import BIN

pytestmark = pytest.mark.cli


READ_BACK = """
import json, sys
from spark_cdc.session.runtime import get_or_create_session
spark = get_or_create_session()
out = {}
for table in sys.argv[1:]:
    out[table] = [row.asDict() for row in spark.table(table).collect()]
print("ROWS=" + json.dumps(out, default=str))
"""


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    # The JVM logs with the project's configuration (spark_cdc/conf/log4j2.properties), not
    # Spark's default one.
    logs = done.stdout + done.stderr
    assert "Reconfiguration failed" not in logs and "default log4j profile" not in logs, logs[
        -3000:
    ]
    return done.stdout


@pytest.fixture(scope="module")
def cli_env(dbt_project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SPARK_CDC_SCHEMA", None)  # the profile's default schema, as a user's command has it
    env["SPARK_CDC_HOME"] = str(tmp_path_factory.mktemp("cli_home"))
    env["DBT_PROFILES_DIR"] = str(dbt_project / "profiles")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_seed_then_snapshot_then_python_model_in_separate_processes(dbt_project, cli_env):
    target = ["--target-path", "target_cli"]
    _run(["dbt", "seed", "--select", "raw_customers", *target], dbt_project, cli_env)
    # A new process finds the seed through the persistent metastore and snapshots it.
    _run(["dbt", "run", "--select", "stg_customers", *target], dbt_project, cli_env)
    _run(["dbt", "snapshot", "--select", "customers_snapshot", *target], dbt_project, cli_env)
    # A Python model runs through the plain CLI on the local target (session submission).
    out = _run(["dbt", "run", "--select", "customers_by_segment", *target], dbt_project, cli_env)
    assert "python table model spark_cdc.customers_by_segment" in out

    shown = _run(
        [
            str(BIN / "python"),
            "-c",
            READ_BACK,
            "spark_cdc.customers_snapshot",
            "spark_cdc.customers_by_segment",
        ],
        dbt_project,
        cli_env,
    )
    payload = json.loads(shown.split("ROWS=", 1)[1])
    snapshot_rows = payload["spark_cdc.customers_snapshot"]
    assert sorted(r["customer_id"] for r in snapshot_rows) == [1, 2, 3, 4, 5]
    assert all(r["dbt_valid_to"] is None for r in snapshot_rows)
    segments = {
        r["segment"]: r["customer_count"] for r in payload["spark_cdc.customers_by_segment"]
    }
    assert segments == {"retail": 3, "corporate": 2}
