"""The warm engine is never in the way: each home has its own (own port, own metastore, a path
with spaces works), an embedded command makes an idle engine of its home give way, a busy one
is named, a command that starts one says so, and a Connect URL in the profile is a server of the
user's (only ``home-engine`` names the home's own)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import BIN, command_env, run_command

from spark_cdc.engine import server as engine
from spark_cdc.targets import Target, connect_url

pytestmark = pytest.mark.cli

# A Connect client in its own process (a classic session and a Connect client cannot share one
# Python process): runs SQL read from argv, prints the rows, then keeps its connection if asked.
CLIENT = """
import sys, time
from pyspark.sql.connect.session import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).create()
for statement in sys.argv[3:]:
    rows = spark.sql(statement).collect()
print([tuple(row) for row in rows], flush=True)
time.sleep(float(sys.argv[2]))
"""


def _client(url: str, *statements: str, hold: float = 0.0, cwd: Path | None = None):
    return subprocess.Popen(
        [sys.executable, "-c", CLIENT, url, str(hold), *statements],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )


def _spark_cdc(home: Path, *args: str) -> subprocess.CompletedProcess:
    return run_command([str(BIN / "spark-cdc"), *args], command_env(home))


def test_two_homes_run_their_engines_at_once_each_on_its_own_port(tmp_path):
    first, second = tmp_path / "home with spaces", tmp_path / "second"
    (tmp_path / "elsewhere" / "landing").mkdir(parents=True)
    (tmp_path / "elsewhere" / "landing" / "lines.txt").write_text("a\nb\nc\n")
    try:
        states = [engine.start(first), engine.start(second)]
        assert states[0]["port"] != states[1]["port"]
        for home, state in zip((first, second), states, strict=True):
            # The server runs in its home: relative paths it is given resolve there.
            assert Path(psutil.Process(state["server_pid"]).cwd()) == home.resolve()
        urls = [engine.Engine(home).url(state["port"]) for home, state in zip(
            (first, second), states, strict=True)]  # fmt: skip
        made = _client(urls[0], "create table only_in_first (id int) using delta",
                       "insert into only_in_first values (1), (2)",
                       "select count(*) from only_in_first")  # fmt: skip
        assert made.communicate(timeout=300)[0].strip() == "[(2,)]", made.stderr.read()
        seen = _client(urls[1], "show tables like 'only_in_first'")
        assert seen.communicate(timeout=300)[0].strip() == "[]"
        # Each engine's metastore and warehouse are in its own home, spaces and all.
        assert (first / "metastore_db").is_dir() and (second / "metastore_db").is_dir()
        assert (first / "warehouse" / "only_in_first" / "_delta_log").is_dir()
        # A relative landing path is the client's: resolved against the folder the command
        # runs in, not the server's.
        read = subprocess.run(
            [sys.executable, "-c",
             "import sys\nfrom pyspark.sql.connect.session import SparkSession\n"
             "from spark_cdc.core.paths import spark_location\n"
             "spark = SparkSession.builder.remote(sys.argv[1]).create()\n"
             "print(spark.read.text(spark_location('landing/lines.txt')).count())",
             urls[1]],
            cwd=tmp_path / "elsewhere", capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert read.stdout.strip() == "3", read.stderr[-2000:]
    finally:
        engine.stop(first)
        engine.stop(second)
    assert engine.status(first) is None and engine.status(second) is None


def test_a_connect_url_in_the_profile_is_used_as_given_and_starts_nothing(tmp_path):
    # A user's own local Connect server (no token): not taken for the home's engine.
    own = Target(name="engine", method="connect", host="sc://localhost:15002")
    assert connect_url(own, tmp_path) == "sc://localhost:15002"
    with_token = Target(name="engine", method="connect", host="sc://h:1", token="t0k")
    assert connect_url(with_token, tmp_path) == "sc://h:1/;token=t0k"
    assert not (tmp_path / "engine").exists()


def test_an_embedded_command_makes_an_idle_engine_give_way_and_names_a_busy_one(tmp_path):
    home = tmp_path / "home"
    state = engine.start(home)
    client = _client(engine.Engine(home).url(state["port"]), "select 1", hold=600)
    try:
        assert client.stdout.readline().strip() == "[(1,)]"
        busy = _spark_cdc(home, "--target", "local", "sql", "select 1")
        assert busy.returncode == 2, busy.stdout + busy.stderr
        assert "in use by its warm connect engine, which has 1 client(s) now" in busy.stderr
        assert engine.status(home) is not None
    finally:
        client.kill()
        client.wait()
    deadline = time.monotonic() + 60
    while (engine.status(home) or {}).get("clients") and time.monotonic() < deadline:
        time.sleep(0.5)
    embedded = _spark_cdc(home, "--target", "local", "sql", "select 41 + 1 as answer")
    assert embedded.returncode == 0, embedded.stderr[-3000:]
    assert "stopping the idle connect engine" in embedded.stderr
    assert "42" in embedded.stdout
    assert engine.status(home) is None
    # A command by hand on the engine target starts it again, and says so.
    by_hand = _spark_cdc(home, "--target", "engine", "sql", "select 42 as answer")
    try:
        assert by_hand.returncode == 0, by_hand.stderr[-3000:]
        assert "starting the warm connect engine of" in by_hand.stderr
        assert "42" in by_hand.stdout
        assert engine.status(home) is not None
    finally:
        engine.stop(home)
