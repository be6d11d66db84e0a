"""The warm local engine: Spark's own Connect (or Thrift) server, started from the pyspark wheel
with the project's runtime settings, one per SPARK_CDC_HOME.

Like the Gradle daemon: the first command that needs it starts it (``spark-cdc engine start``,
or a dbt command on the ``engine`` target), later ones find it. A supervisor process owns it:

- it holds the home's lock (the Derby metastore under the home is the engine's now: an embedded
  dbt command on the same home fails at once, naming the engine);
- it starts ``SparkConnectServer`` (or ``HiveThriftServer2``) with ``bin/spark-submit``, bound to
  127.0.0.1 only, with Delta, the metastore and warehouse of the home, UTC and lean settings;
- it writes ``<home>/engine/<kind>.json`` (pid, port, url, started_at), logs to
  ``<home>/engine/<kind>.log``, and stops the server when no client has been connected for
  ``idle_timeout`` seconds (default 30 minutes), on ``spark-cdc engine stop`` or on SIGTERM.

Access: the Connect server requires a pre-shared token (``spark.connect.authenticate.token``),
generated at the first start and kept in ``<home>/engine/token`` (mode 0600): another local
user can reach the loopback port but cannot run SQL without the token. The Thrift server has no
such check in Spark (anyone who can reach its loopback port can run SQL): use it only on a
single-user machine or behind your own authentication.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from spark_cdc.home_lock import HomeInUseError, acquire_home, holder_of, lock_descriptor
from spark_cdc.jars import delta_jars, fetch_delta_jars
from spark_cdc.runtime import DEFAULT_MASTER, default_home, session_settings

KINDS = {
    "connect": ("org.apache.spark.sql.connect.service.SparkConnectServer", 15002),
    "thrift": ("org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", 10000),
}
DEFAULT_IDLE_TIMEOUT = 1800
LOOPBACK = "127.0.0.1"


class EngineError(RuntimeError):
    """The engine could not be started, reached or stopped."""


@dataclass(frozen=True)
class Engine:
    """One kind of engine of one home."""

    home: Path
    kind: str = "connect"

    @property
    def folder(self) -> Path:
        return self.home / "engine"

    @property
    def state_file(self) -> Path:
        return self.folder / f"{self.kind}.json"

    @property
    def log_file(self) -> Path:
        return self.folder / f"{self.kind}.log"

    @property
    def token_file(self) -> Path:
        return self.folder / "token"

    def state(self) -> dict | None:
        """The running engine's state (None when it is not running)."""
        try:
            state = json.loads(self.state_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return state if _alive(state.get("supervisor_pid")) else None

    def token(self) -> str:
        """The Connect token of this home (created, user-only, at first use)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.token_file.exists():
            descriptor = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_urlsafe(32))
        os.chmod(self.token_file, 0o600)
        return self.token_file.read_text().strip()

    def url(self, port: int) -> str:
        """How clients reach it: a Spark Connect URL with the token, or a Thrift host:port."""
        if self.kind == "connect":
            return f"sc://localhost:{port}/;token={self.token()}"
        return f"{LOOPBACK}:{port}"


def _alive(pid: object) -> bool:
    """Whether process ``pid`` runs (a finished child of this process is reaped, not alive)."""
    if not isinstance(pid, int):
        return False
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _port_open(port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout):
            return True
    except OSError:
        return False


def _established_connections(port: int) -> int:
    """Clients connected to the loopback port now (Linux /proc/net/tcp, state ESTABLISHED)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and fields[3] == "01":
                count += 1
    return count


def server_command(engine: Engine, port: int, master: str = DEFAULT_MASTER) -> list[str]:
    """The spark-submit command line of the server, with the project's runtime settings."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    settings = session_settings(engine.home, master)
    jars = ",".join(str(jar) for jar in (delta_jars() or fetch_delta_jars()))
    settings.update(
        {
            "spark.jars": jars,
            "spark.app.name": f"spark_cdc {engine.kind} engine",
            "spark.driver.bindAddress": LOOPBACK,
            "spark.driver.host": LOOPBACK,
        }
    )
    if engine.kind == "connect":
        settings.update(
            {
                "spark.connect.grpc.binding.address": LOOPBACK,
                "spark.connect.grpc.binding.port": str(port),
            }
        )
    else:
        settings.update(
            {
                "spark.hadoop.hive.server2.thrift.bind.host": LOOPBACK,
                "spark.hadoop.hive.server2.thrift.port": str(port),
                # Delta's classes must be on the driver's class path, not only in spark.jars:
                # the Thrift server resolves data sources with the system class loader.
                "spark.driver.extraClassPath": jars.replace(",", ":"),
            }
        )
    memory = settings.pop("spark.driver.memory")
    command = [
        str(spark_home / "bin" / "spark-submit"),
        "--class",
        KINDS[engine.kind][0],
        "--master",
        settings.pop("spark.master"),
        "--driver-memory",
        memory,
    ]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    if engine.kind == "thrift":
        command += [
            "--hiveconf",
            f"hive.server2.thrift.bind.host={LOOPBACK}",
            "--hiveconf",
            f"hive.server2.thrift.port={port}",
        ]
    return command


def _die_with_parent() -> None:
    """In the server's process: receive SIGTERM when the supervisor dies, however it dies."""
    import ctypes

    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def serve(engine: Engine, port: int, idle_timeout: float) -> int:
    """The supervisor: hold the home, run the server, stop it when idle or told to."""
    acquire_home(
        engine.home,
        hint="stop the engine first (spark-cdc engine stop)",
        description=(
            f"the spark_cdc {engine.kind} engine (pid {os.getpid()}, port {port}): run commands "
            f"through it (SPARK_CDC_TARGET=engine) or stop it (spark-cdc engine stop"
            f"{' --thrift' if engine.kind == 'thrift' else ''})"
        ),
    )
    engine.folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    import pyspark

    env["SPARK_HOME"] = str(Path(pyspark.__file__).parent)
    if engine.kind == "connect":
        # The token reaches the server through its environment, not its command line (which
        # any local user can read in the process list).
        env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = engine.token()
    log = engine.log_file.open("ab")
    server = subprocess.Popen(
        server_command(engine, port),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        # The server holds the home's lock too (the metastore is open as long as it runs).
        pass_fds=(lock_descriptor(engine.home),),
        preexec_fn=_die_with_parent,
    )
    stopping = {"now": False}

    def stop(*_: object) -> None:
        stopping["now"] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    state = {
        "kind": engine.kind,
        "supervisor_pid": os.getpid(),
        "server_pid": server.pid,
        "port": port,
        "url": engine.url(port) if engine.kind == "thrift" else f"sc://localhost:{port}",
        "started_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "idle_timeout": idle_timeout,
        "log": str(engine.log_file),
    }
    engine.state_file.write_text(json.dumps(state))
    last_used = time.monotonic()
    answering = False
    try:
        while not stopping["now"] and server.poll() is None:
            time.sleep(2)
            # The idle clock starts once the server answers (its start-up is not idleness).
            answering = answering or _port_open(port)
            if not answering or _established_connections(port) > 0:
                last_used = time.monotonic()
            elif time.monotonic() - last_used > idle_timeout:
                break
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        engine.state_file.unlink(missing_ok=True)
    return 0


def start(
    home: Path | None = None,
    kind: str = "connect",
    port: int | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    wait: float = 300.0,
) -> dict:
    """Start the engine of ``home`` unless it runs; wait until it answers; return its state."""
    engine = Engine((home or default_home()).resolve(), kind)
    running = engine.state()
    if running is not None:
        return running
    holder = holder_of(engine.home)
    if holder is not None:
        raise HomeInUseError(
            f"SPARK_CDC_HOME {engine.home} is in use by {holder}: the engine needs the home's "
            "metastore to itself. Stop that process first."
        )
    port = port or KINDS[kind][1]
    if _port_open(port):
        raise EngineError(f"port {port} on {LOOPBACK} is taken by another program: pass --port")
    engine.folder.mkdir(parents=True, exist_ok=True)
    supervisor = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spark_cdc.engine",
            "serve",
            str(engine.home),
            kind,
            str(port),
            str(idle_timeout),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=engine.log_file.open("ab"),
        start_new_session=True,
    )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if supervisor.poll() is not None:
            raise EngineError(
                f"the {kind} engine stopped while starting (exit code {supervisor.returncode}); "
                f"see {engine.log_file}:\n{_log_tail(engine.log_file)}"
            )
        state = engine.state()
        if state is not None and _port_open(port):
            return state
        time.sleep(1)
    stop(engine.home, kind)
    raise EngineError(
        f"the {kind} engine did not answer within {wait:.0f} s; see {engine.log_file}"
    )


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    interesting = [line for line in text if "ERROR" in line or "Exception" in line]
    return "\n".join((interesting or text)[-lines:])


def stop(home: Path | None = None, kind: str = "connect", wait: float = 60.0) -> bool:
    """Stop the engine of ``home``; False when it was not running."""
    engine = Engine((home or default_home()).resolve(), kind)
    state = engine.state()
    if state is None:
        return False
    os.kill(state["supervisor_pid"], signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and _alive(state["supervisor_pid"]):
        time.sleep(0.5)
    if _alive(state["supervisor_pid"]):
        raise EngineError(f"the engine (pid {state['supervisor_pid']}) did not stop in {wait} s")
    return True


def status(home: Path | None = None, kind: str = "connect") -> dict | None:
    """The running engine's state with its clients now (None when it is not running)."""
    engine = Engine((home or default_home()).resolve(), kind)
    state = engine.state()
    if state is None:
        return None
    return {**state, "clients": _established_connections(state["port"])}


def main(argv: list[str]) -> int:
    """``python -m spark_cdc.engine serve HOME KIND PORT IDLE_TIMEOUT`` (used by :func:`start`)."""
    _, home, kind, port, idle = argv
    return serve(Engine(Path(home), kind), int(port), float(idle))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
