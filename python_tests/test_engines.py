"""Every target is a tested path: real servers from the pyspark wheel on loopback — the warm
Connect engine, the Thrift engine, a standalone master and worker — each running the engine
suite (python_tests/engine_suite) in a subprocess; plus the engine's own behaviour (two plain
dbt commands at once, the token, the idle stop, the home it holds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psutil
import pytest
from servers import run_engine_suite, suite_passed
from support import PROJECT_DIR, command_env, docs_text, run_command

from spark_cdc.engine import server as engine
from spark_cdc.session.home_lock import holder_of
from spark_cdc_dev.project_copies import copy_project

pytestmark = pytest.mark.cli


@pytest.fixture(scope="module")
def connect_engine(tmp_path_factory):
    home = tmp_path_factory.mktemp("connect_engine")
    # Warmed as a user's engine is (the suite's other engines skip it: conftest.py), one round.
    os.environ["SPARK_CDC_ENGINE_WARMUP"] = "1"
    try:
        state = engine.start(home, "connect")
    finally:
        os.environ["SPARK_CDC_ENGINE_WARMUP"] = "0"
    yield home, state
    engine.stop(home, "connect")


SCHEMA_LISTING = (
    "import json, sys\nfrom pyspark.sql import SparkSession\n"
    "spark = SparkSession.builder.remote(sys.argv[1]).create()\n"
    "print(json.dumps([r[0] for r in spark.sql('show databases').collect()]))\nspark.stop()\n"
)


def _schemas(home, url: str) -> list[str]:
    """The schemas the engine at ``url`` lists, read by a Connect client of its own."""
    done = run_command([sys.executable, "-c", SCHEMA_LISTING, url], command_env(home), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_engine_is_warmed_before_clients_find_it(connect_engine):
    home, state = connect_engine
    log = engine.Engine(home).log_file.read_text(errors="replace")
    assert "spark_cdc engine warm-up: 1 round in" in log
    # Its scratch schema is gone from the metastore, and its files from the engine's folder.
    assert not (engine.Engine(home).folder / "warmup").exists()
    schemas = _schemas(home, engine.Engine(home).url(state["port"]))
    assert "spark_cdc" in schemas or "default" in schemas, schemas
    assert not [name for name in schemas if name.startswith("spark_cdc_engine_warmup")]


def test_a_warm_up_drops_the_scratch_schema_a_killed_one_left(connect_engine):
    home, state = connect_engine
    url = engine.Engine(home).url(state["port"])
    folder = engine.Engine(home).folder
    # What a warm-up killed mid-round leaves: its schema, with a table, in the engine's folder.
    leftover = (
        "import sys\nfrom pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.remote(sys.argv[1]).create()\n"
        "spark.sql(f\"create schema spark_cdc_engine_warmup_1 location '{sys.argv[2]}'\")\n"
        "spark.range(3).write.format('delta').saveAsTable('spark_cdc_engine_warmup_1.events')\n"
        "spark.stop()\n"
    )
    made = run_command(
        [sys.executable, "-c", leftover, url, str(folder / "warmup")],
        command_env(home),
        timeout=120,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    assert (folder / "warmup").exists()
    # The next warm-up (zero rounds: only its set-up and clean-up) drops it.
    token = engine.Engine(home).token()
    env = command_env(home, SPARK_CONNECT_AUTHENTICATE_TOKEN=token, SPARK_CDC_ENGINE_WARMUP="0")
    command = [sys.executable, "-m", "spark_cdc.engine.warmup", str(folder), str(state["port"])]
    warmed = run_command(command, env, timeout=120)
    assert warmed.returncode == 0, warmed.stderr[-2000:]
    assert "warm-up: 0 rounds in" in warmed.stdout
    schemas = _schemas(home, url)
    assert not [name for name in schemas if name.startswith("spark_cdc_engine_warmup")], schemas
    assert not (folder / "warmup").exists()


KEEP_THEN_DIE = (
    "import os, signal, sys\nfrom pyspark.sql import SparkSession\n"
    "from spark_cdc.core.cache_slots import keep\n"
    "spark = SparkSession.builder.remote(sys.argv[1]).create()\n"
    "frame = keep(spark.range(0, 5000, 1, 2).selectExpr('id * 7919 as probe'), 'test.probe')\n"
    "print(frame.count(), flush=True)\n"
    "os.kill(os.getpid(), signal.SIGKILL)\n"
)
PROBE = (
    "import json, sys\nfrom pyspark.sql import SparkSession\n"
    "spark = SparkSession.builder.remote(sys.argv[1]).create()\n"
    "level = spark.range(0, 5000, 1, 2).selectExpr('id * 7919 as probe').storageLevel\n"
    "print(json.dumps(level.useMemory or level.useDisk))\nspark.stop()\n"
)


def test_what_a_killed_client_cached_is_released_by_the_next_run(connect_engine, tmp_path):
    """A client killed while it holds a cached frame leaves it in the engine's shared cache; the
    next dbt run on the engine releases it."""
    home, state = connect_engine
    url = engine.Engine(home).url(state["port"])

    def cached() -> bool:
        done = run_command([sys.executable, "-c", PROBE, url], command_env(home), timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    killed = run_command([sys.executable, "-c", KEEP_THEN_DIE, url], command_env(home), timeout=120)
    assert killed.returncode == -9 and killed.stdout.strip() == "5000", killed.stderr[-2000:]
    assert cached()
    env = command_env(home, SPARK_CDC_TARGET="engine")
    command = ["dbt", "debug"]
    debug = run_command(command, env, cwd=PROJECT_DIR, timeout=300)
    assert debug.returncode == 0, debug.stdout[-3000:]
    assert not cached()


def test_the_engine_suite_on_the_warm_connect_engine(connect_engine):
    home, _ = connect_engine
    result = run_engine_suite("connect", home, SPARK_CDC_TARGET="engine")
    suite_passed(result)


def test_two_plain_dbt_commands_at_once_on_the_engine(connect_engine, tmp_path):
    home, _ = connect_engine
    # The engine suite's tables, in the profile's default schema (not this module's).
    env = command_env(home, drop=("SPARK_CDC_SCHEMA",), SPARK_CDC_TARGET="engine")
    commands = [
        ["dbt", "seed", "--select", "raw_customers", "--target-path", str(tmp_path / "a")],
        ["dbt", "run", "--select", "stg_customer_states", "--target-path", str(tmp_path / "b")],
    ]
    started = [
        subprocess.Popen(c, cwd=PROJECT_DIR, env=env, stdout=subprocess.PIPE, text=True)
        for c in commands
    ]
    outputs = [process.communicate(timeout=600)[0] for process in started]
    for process, output in zip(started, outputs, strict=True):
        assert process.returncode == 0, output[-3000:]
        assert "Completed successfully" in output


def test_the_engine_holds_its_home_and_requires_its_token(connect_engine):
    home, state = connect_engine
    assert "spark_cdc connect engine" in (holder_of(home) or "")
    token_file = engine.Engine(home).token_file
    assert token_file.stat().st_mode & 0o777 == 0o600
    probe = (
        "import sys\n"
        "from pyspark.sql.connect.session import SparkSession\n"
        "try:\n"
        "    SparkSession.builder.remote(sys.argv[1]).create().sql('select 1').collect()\n"
        "    print('ALLOWED')\n"
        "except Exception as error:\n"
        "    print('REFUSED', type(error).__name__, str(error).splitlines()[0])\n"
    )
    port = state["port"]
    for url, expected in (
        (f"sc://localhost:{port}/;token=not-the-token", "REFUSED"),
        (f"sc://localhost:{port}", "REFUSED"),
        (engine.Engine(home).url(port), "ALLOWED"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", probe, url], capture_output=True, text=True, timeout=120
        ).stdout
        assert out.startswith(expected), (url, out)


def test_an_idle_engine_stops_by_itself_and_releases_its_home(tmp_path):
    state = engine.start(tmp_path, "connect", idle_timeout=3)
    deadline = time.monotonic() + 120
    while engine.status(tmp_path) is not None and time.monotonic() < deadline:
        time.sleep(1)
    assert engine.status(tmp_path) is None
    # The state goes first (no client is handed a stopping server), then the server and the
    # supervisor end.
    supervisor = (state["supervisor_pid"], state["supervisor_started"])
    while engine.process_of(*supervisor) is not None and time.monotonic() < deadline + 60:
        time.sleep(0.5)
    assert engine.process_of(*supervisor) is None
    assert not psutil.pid_exists(state["server_pid"]) or (
        psutil.Process(state["server_pid"]).status() == psutil.STATUS_ZOMBIE
    )
    assert holder_of(tmp_path) is None


def test_the_readme_engine_commands_as_written(tmp_path):
    readme = docs_text()
    block = readme.split("<!-- readme-engine-test -->\n```bash\n", 1)[1].split("```", 1)[0]
    project = copy_project(tmp_path / "spark_cdc", PROJECT_DIR)
    env = command_env(
        tmp_path / "home", drop=("SPARK_CDC_", "PYTEST_CURRENT_TEST"), profiles=project / "profiles"
    )
    env["SPARK_CDC_PROGRESS_SECONDS"] = "3"  # the start says what it does, every 3 s
    done = run_command(["bash", "-e", "-c", block], env, cwd=project, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "connect engine started: sc://localhost:" in done.stdout
    assert "spark_cdc: the connect engine is starting: " in done.stderr, done.stderr[-2000:]
    assert "Completed successfully" in done.stdout
    assert "connect engine: running at" in done.stdout and "connect engine stopped" in done.stdout
    assert engine.status(tmp_path / "home") is None
