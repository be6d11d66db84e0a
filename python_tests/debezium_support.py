"""Real PostgreSQL and MariaDB servers (Debian's packages) and real Debezium connectors (the
embedded engine, from Maven Central) for the tests, on loopback, in temporary folders, stopped by
process id. With SPARK_CDC_REQUIRE_DATABASES=1 (CI) a missing server fails its tests instead of
skipping them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from servers import free_port, stop, wait_for_port

from spark_cdc.session.jars import copy_dependencies

DEBEZIUM_VERSION = "3.6.1.Final"
# The newest Debezium MariaDB connector Maven Central serves here; the embedded engine of the
# same release runs it.
MARIADB_DEBEZIUM_VERSION = "3.5.0.Final"
POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")
MARIADB_SERVER = Path("/usr/sbin/mariadbd")
CAPTURE_SOURCE = Path(__file__).parent / "debezium" / "CaptureToFiles.java"
CACHE = Path.home() / ".cache" / "spark_cdc"
REQUIRED = os.environ.get("SPARK_CDC_REQUIRE_DATABASES") == "1"


def postgres_available() -> bool:
    return REQUIRED or ((POSTGRES_BIN / "postgres").exists() and shutil.which("javac") is not None)


def mariadb_available() -> bool:
    return REQUIRED or (MARIADB_SERVER.exists() and shutil.which("javac") is not None)


def capture_classpath(
    connector: str = "debezium-connector-postgres", version: str = DEBEZIUM_VERSION
) -> str:
    """Debezium's embedded engine and a connector of one release (fetched once with Maven) and
    the capture program compiled against them, as a Java class path."""
    cache = CACHE / f"debezium-{version}"
    jars = []
    for artifact in ("debezium-embedded", connector):
        folder = cache / artifact
        if not folder.exists():
            copy_dependencies(("io.debezium", artifact, version), folder)
        jars.append(f"{folder}/*")
    classes = cache / "classes"
    program = classes / "CaptureToFiles.class"
    if not program.exists() or program.stat().st_mtime < CAPTURE_SOURCE.stat().st_mtime:
        staging = Path(tempfile.mkdtemp(prefix=".classes.", dir=cache))
        subprocess.run(
            ["javac", "-cp", ":".join(jars), "-d", str(staging), str(CAPTURE_SOURCE)], check=True
        )
        shutil.rmtree(classes, ignore_errors=True)
        staging.rename(classes)
    return ":".join([str(classes), *jars])


@dataclass
class Postgres:
    """A running server: its port, and ``sql`` to run statements as the superuser."""

    port: int
    folder: Path

    def sql(self, statements: str) -> str:
        result = subprocess.run(
            [
                "psql",
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                "postgres",
            ],
            input=statements,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr}")
        return result.stdout

    def rows(self, query: str) -> list[dict]:
        """The rows of ``query`` as JSON objects (Postgres's own text of each value)."""
        text = self.sql(f"select coalesce(json_agg(t), '[]') from ({query}) t;")
        return json.loads(text)


def _as_server_user(command: list[str]) -> list[str]:
    """Postgres refuses to run as root: as root, run it as ``nobody``."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "nobody", "--", *command]


@contextmanager
def postgres_server() -> Iterator[Postgres]:
    """PostgreSQL 15 with ``wal_level=logical`` on a free loopback port, its own data folder."""
    folder = Path(tempfile.mkdtemp(prefix="spark_cdc_pg_"))
    folder.chmod(0o755)
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody")
    subprocess.run(
        _as_server_user(
            [str(POSTGRES_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        ),
        check=True,
        capture_output=True,
    )
    port = free_port()
    log = (folder / "server.log").open("wb")
    settings = {
        "listen_addresses": "127.0.0.1",
        "unix_socket_directories": str(folder),
        "wal_level": "logical",
        "max_wal_senders": "8",
        "max_replication_slots": "8",
        "fsync": "off",
        "TimeZone": "UTC",
    }
    command = [str(POSTGRES_BIN / "postgres"), "-D", str(data), "-p", str(port)]
    for name, value in settings.items():
        command += ["-c", f"{name}={value}"]
    process = subprocess.Popen(
        _as_server_user(command), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        wait_for_port(port, 60)
        yield Postgres(port, folder)
    finally:
        stop(process)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Capture:
    """A running connector writing ``OUT/<topic>/<delivery>.jsonl`` files."""

    out: Path
    process: subprocess.Popen

    def files(self, topic: str) -> list[Path]:
        folder = self.out / topic
        return sorted(folder.glob("[0-9]*.jsonl")) if folder.exists() else []

    def wait_for(self, topic: str, text: str, timeout: float = 180.0) -> None:
        """Wait until a delivered message of ``topic`` contains ``text``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the capture stopped: {(self.out / 'capture.log').read_text()}")
            if any(text in path.read_text() for path in self.files(topic)):
                return
            time.sleep(0.3)
        raise TimeoutError(f"no message with {text!r} on {topic} within {timeout:.0f} s")


@contextmanager
def debezium_capture(
    postgres: Postgres,
    name: str,
    tables: list[str],
    settings: Mapping[str, str],
    folder: Path,
    kafka: str | None = None,
) -> Iterator[Capture]:
    """Debezium's Postgres connector (pgoutput, a slot and publication of its own, truncates
    included) capturing ``tables``, with the connector ``settings`` on top of its defaults;
    every record also sent to the Kafka broker ``kafka`` when given (topic = the destination)."""
    properties = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "127.0.0.1",
        "database.port": str(postgres.port),
        "database.user": "postgres",
        "database.password": "unused",
        "database.dbname": "postgres",
        "plugin.name": "pgoutput",
        "slot.name": name,
        "publication.name": f"{name}_publication",
        "publication.autocreate.mode": "filtered",
        "table.include.list": ",".join(tables),
        **settings,
    }
    with _capture(name, properties, folder, capture_classpath(), kafka) as capture:
        yield capture


@contextmanager
def _capture(
    name: str, connector: Mapping[str, str], folder: Path, classpath: str, kafka: str | None
) -> Iterator[Capture]:
    """The capture program running one connector (its properties on top of the engine's: file
    offsets, no flush delay, truncates captured)."""
    out = folder / name
    out.mkdir(parents=True)
    properties = {
        "name": name,
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(folder / f"{name}.offsets"),
        "offset.flush.interval.ms": "0",
        "topic.prefix": name,
        "skipped.operations": "none",
        **connector,
    }
    config = folder / f"{name}.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in properties.items()))
    command = [
        "java",
        "-Xmx384m",
        "-XX:TieredStopAtLevel=1",
        "-cp",
        classpath,
        "CaptureToFiles",
        str(config),
        str(out),
        *([kafka] if kafka else []),
    ]
    log = (out / "capture.log").open("wb")
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        yield Capture(out, process)
    finally:
        (out / "STOP").touch()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stop(process)


@dataclass
class MariaDb:
    """A running MariaDB server: its port, and ``sql`` / ``rows`` as root."""

    port: int
    folder: Path

    def sql(self, statements: str, database: str = "shop") -> str:
        result = subprocess.run(
            [
                "mariadb",
                "--no-defaults",
                "-h",
                "127.0.0.1",
                "-P",
                str(self.port),
                "-u",
                "root",
                "-N",
                "-B",
                "-r",
                database,
            ],
            input=statements,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"mariadb failed: {result.stderr}")
        return result.stdout

    def rows_of(self, query: str) -> list[dict]:
        """The rows of ``query``, a select of one JSON array of objects (MariaDB's own text)."""
        text = self.sql(query + ";")
        return json.loads(text.strip() or "null") or []


@contextmanager
def mariadb_server() -> Iterator[MariaDb]:
    """MariaDB from Debian's package on a free loopback port, its own data folder, a row-based
    binary log with full images, UTC; a database ``shop`` and a user ``dbz`` for the
    connector."""
    folder = Path(tempfile.mkdtemp(prefix="spark_cdc_mariadb_"))
    data = folder / "data"
    user = ["--user=root"] if os.geteuid() == 0 else []
    subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={data}",
            *user,
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    log = (folder / "server.log").open("wb")
    command = [
        str(MARIADB_SERVER),
        "--no-defaults",
        f"--datadir={data}",
        *user,
        "--bind-address=127.0.0.1",
        f"--port={port}",
        f"--socket={folder / 'mysqld.sock'}",
        f"--log-bin={data / 'mysql-bin'}",
        "--server-id=1",
        "--binlog-format=ROW",
        "--binlog-row-image=FULL",
        "--default-time-zone=+00:00",
        "--skip-name-resolve",
        "--innodb-flush-log-at-trx-commit=0",
        "--sync-binlog=0",
    ]
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        wait_for_port(port, 60)
        server = MariaDb(port, folder)
        server.sql(
            "create database shop; create user dbz identified by 'dbz'; grant all on *.* to dbz;",
            database="mysql",
        )
        yield server
    finally:
        stop(process)
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def mariadb_capture(
    server: MariaDb, name: str, settings: Mapping[str, str], folder: Path, kafka: str | None = None
) -> Iterator[Capture]:
    """Debezium's MariaDB connector capturing the database ``shop`` (its schema history in a
    file), with the connector ``settings`` on top of its defaults."""
    properties = {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": "127.0.0.1",
        "database.port": str(server.port),
        "database.user": "dbz",
        "database.password": "dbz",
        "database.server.id": str(5400 + server.port % 1000),
        "database.include.list": "shop",
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(folder / f"{name}.history"),
        **settings,
    }
    classpath = capture_classpath("debezium-connector-mariadb", MARIADB_DEBEZIUM_VERSION)
    with _capture(name, properties, folder, classpath, kafka) as capture:
        yield capture
