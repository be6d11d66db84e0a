"""The runtime fails fast and clearly: a second process on one SPARK_CDC_HOME, a master URL that
nothing listens on (plain dbt command lines, one process each)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from support import BIN, command_env, run_command

from spark_cdc.session.home_lock import HomeInUseError, acquire_home, holder_of, release_home

pytestmark = pytest.mark.cli

HOLD_SESSION = (
    "import time\n"
    "from spark_cdc.session.runtime import get_or_create_session\n"
    "spark = get_or_create_session()\n"
    "spark.sql('show databases').collect()\n"
    "print('ready', flush=True)\n"
    "time.sleep(300)\n"
)


def _env(dbt_project: Path, home: Path, **extra: str) -> dict[str, str]:
    return command_env(home, drop=(), profiles=dbt_project / "profiles", **extra)


def _dbt(args: list[str], project: Path, env: dict[str, str]) -> tuple[float, str, int]:
    started = time.monotonic()
    done = run_command(["dbt", *args, "--target-path", "target_guards"], env, cwd=project)
    return time.monotonic() - started, done.stdout + done.stderr, done.returncode


def test_the_home_lock_names_its_holder_and_is_released(tmp_path):
    acquire_home(tmp_path)
    try:
        assert f"pid {os.getpid()}" in (holder_of(tmp_path) or "")
        probe = subprocess.run(
            [
                str(BIN / "python"),
                "-c",
                "import sys; from spark_cdc.session.home_lock import acquire_home; "
                f"acquire_home(__import__('pathlib').Path({str(tmp_path)!r}))",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert probe.returncode != 0
        assert HomeInUseError.__name__ in probe.stderr and f"pid {os.getpid()}" in probe.stderr
    finally:
        release_home(tmp_path)
    assert holder_of(tmp_path) is None


def test_a_second_dbt_command_on_a_busy_home_fails_within_seconds(dbt_project, tmp_path):
    env = _env(dbt_project, tmp_path)
    holder = subprocess.Popen(
        [str(BIN / "python"), "-c", HOLD_SESSION],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        elapsed, output, code = _dbt(["run", "--select", "stg_customers"], dbt_project, env)
        assert code != 0
        assert f"SPARK_CDC_HOME {tmp_path} is in use by pid {holder.pid}" in output
        assert "allows one process at a time" in output
        assert elapsed < 60, f"took {elapsed:.0f} s"
    finally:
        holder.kill()
        holder.wait()


def test_an_unreachable_master_fails_within_seconds(dbt_project, tmp_path):
    env = _env(dbt_project, tmp_path, SPARK_CDC_MASTER="spark://127.0.0.1:7")
    elapsed, output, code = _dbt(["run", "--select", "stg_customers"], dbt_project, env)
    assert code != 0
    assert "Spark master spark://127.0.0.1:7 is not reachable" in output
    assert elapsed < 60, f"took {elapsed:.0f} s"
