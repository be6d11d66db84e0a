"""Real Spark servers for the tests, started from the pyspark wheel on loopback and stopped by
process id: a standalone master and worker (the warm Connect and Thrift engines are the
project's own, spark_cdc.engine.server)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pyspark
from support import PROJECT_DIR

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"nothing answered on 127.0.0.1:{port} within {timeout:.0f} s")


def _spark_class(args: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), *args],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(process: subprocess.Popen) -> None:
    """Stop a server and its children by process group (SIGTERM, then SIGKILL)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def standalone_cluster(folder: Path, cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """A standalone master and one worker on loopback; yields the master URL."""
    port = free_port()
    master = _spark_class(
        [
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(free_port()),
        ],
        folder / "master.log",
    )
    worker = None
    try:
        wait_for_port(port)
        url = f"spark://127.0.0.1:{port}"
        worker = _spark_class(
            [
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--webui-port",
                str(free_port()),
                "--work-dir",
                str(folder / "work"),
                url,
            ],
            folder / "worker.log",
        )
        yield url
    finally:
        if worker is not None:
            stop(worker)
        stop(master)


def run_engine_suite(engine: str, home: Path, **env: str) -> subprocess.CompletedProcess:
    """Run python_tests/engine_suite against ``engine`` in a subprocess (its own process: a
    Spark Connect client and a classic session cannot share one Python process)."""
    # The suite's own schema is the profile's default (the calling module's is not passed on).
    inherited = {key: value for key, value in os.environ.items() if key != "SPARK_CDC_SCHEMA"}
    environment = {
        **inherited,
        "SPARK_CDC_ENGINE_SUITE": engine,
        "SPARK_CDC_HOME": str(home),
        "DBT_PROFILES_DIR": str(PROJECT_DIR / "profiles"),
        **env,
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(PROJECT_DIR / "python_tests" / "engine_suite"),
            "-q",
            "-p",
            "no:cacheprovider",
            "--tb=short",
        ],
        cwd=PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        # Below the test's own timeout (pyproject.toml): the suite's output is then reported.
        timeout=1100,
        check=False,
    )


def suite_passed(result: subprocess.CompletedProcess) -> str:
    """Assert that an engine-suite run passed every test; its summary line."""
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, f"{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    assert " passed" in summary and "failed" not in summary and "skipped" not in summary
    return summary


KAFKA_VERSION = "4.4.0"  # the broker's (org.apache.kafka:kafka_2.13 on Maven Central)


def kafka_broker_jars() -> Path:
    """The folder of a Kafka broker's jars (kafka_2.13 and its runtime dependencies), fetched
    from Maven Central once into ``~/.cache/spark_cdc/kafka-broker-<version>``."""
    from spark_cdc.session.jars import copy_dependencies

    folder = Path.home() / ".cache" / "spark_cdc" / f"kafka-broker-{KAFKA_VERSION}"
    if not (folder / f"kafka_2.13-{KAFKA_VERSION}.jar").exists():
        copy_dependencies(("org.apache.kafka", "kafka_2.13", KAFKA_VERSION), folder)
    return folder


@contextmanager
def kafka_broker(folder: Path) -> Iterator[str]:
    """A single-node Kafka broker in KRaft mode (broker and controller in one process) on
    loopback, its data in ``folder``; yields its bootstrap address."""
    with _kafka_broker(folder, {}) as (address, _):
        yield address


@contextmanager
def kafka_broker_with_sasl(folder: Path, users: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """A Kafka broker as :func:`kafka_broker` with a second listener that authenticates its
    clients (SASL_PLAINTEXT, mechanism PLAIN, ``users``: name -> password); yields the
    addresses of the open listener and of the authenticating one."""
    with _kafka_broker(folder, users) as addresses:
        yield addresses


@contextmanager
def _kafka_broker(folder: Path, sasl_users: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    import base64
    import uuid

    jars = kafka_broker_jars()
    port, controller, sasl = free_port(), free_port(), free_port()
    listeners = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}"
    advertised = f"PLAINTEXT://127.0.0.1:{port}"
    protocols = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
    if sasl_users:
        listeners += f",SASL_PLAINTEXT://127.0.0.1:{sasl}"
        advertised += f",SASL_PLAINTEXT://127.0.0.1:{sasl}"
        protocols += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller}",
        "listeners": listeners,
        "advertised.listeners": advertised,
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": protocols,
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(folder / "data"),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    if sasl_users:
        accounts = " ".join(f'user_{name}="{password}"' for name, password in sasl_users.items())
        settings["sasl.enabled.mechanisms"] = "PLAIN"
        settings["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {accounts};"
        )
    properties = folder / "server.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    java = ["java", "-Xmx512m", "-cp", f"{jars}/*"]
    cluster_id = "-"
    while cluster_id.startswith("-"):  # as Kafka's own ids: a leading "-" reads as an option
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    subprocess.run(
        [
            *java,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            cluster_id,
            "-c",
            str(properties),
            "--standalone",
        ],
        check=True,
        capture_output=True,
    )
    broker = subprocess.Popen(
        [*java, "kafka.Kafka", str(properties)],
        stdout=(folder / "broker.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_port(port)
        if sasl_users:
            wait_for_port(sasl)
        yield f"127.0.0.1:{port}", f"127.0.0.1:{sasl}"
    finally:
        stop(broker)
