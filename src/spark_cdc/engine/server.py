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
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

from spark_cdc.core.progress_lines import interval as progress_interval
from spark_cdc.engine.warmup import warmup_rounds
from spark_cdc.session.class_archive import add_to_driver_options
from spark_cdc.session.engine_state import (
    DEFAULT_IDLE_TIMEOUT,
    KINDS,
    LOOPBACK,
    Engine,
    EngineError,
    established_connections,
    make_way_for_embedded,
    process_of,
    status,
    stop,
)
from spark_cdc.session.home_lock import (
    HomeInUseError,
    acquire_home,
    default_home,
    holder_of,
    lock_descriptor,
)

# The engine's API for its clients (the CLI, the targets, the adapter): starting and serving
# here, its state (status, stop, who may take the home) in spark_cdc.session.engine_state.
__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "KINDS",
    "LOOPBACK",
    "Engine",
    "EngineError",
    "make_way_for_embedded",
    "process_of",
    "serve",
    "server_command",
    "start",
    "status",
    "stop",
    "supervisor_command",
]
from spark_cdc.session.jars import session_jars
from spark_cdc.session.runtime import DEFAULT_MASTER, session_settings


def _write_state(path: Path, state: dict) -> None:
    """Replace the state file in one step: a reader sees the old state or the new one."""
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(state))
    os.replace(partial, path)


@contextlib.contextmanager
def _start_lock(engine: Engine, wait: float):
    """One start at a time per engine of a home: the second starter waits, then finds the
    first one's engine."""
    engine.folder.mkdir(parents=True, exist_ok=True)
    with (engine.folder / f"{engine.kind}.start.lock").open("a") as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EngineError(
                        f"another command has been starting the {engine.kind} engine for over "
                        f"{wait:.0f} s; see {engine.log_file}"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _free_port() -> int:
    """A loopback port free now, chosen by the kernel: each home's engine gets its own."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def _port_open(port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout):
            return True
    except OSError:
        return False


def server_command(engine: Engine, port: int, master: str = DEFAULT_MASTER) -> list[str]:
    """The spark-submit command line of the server, with the project's runtime settings."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    settings = session_settings(engine.home, master)
    jar_paths = session_jars()
    jars = ",".join(str(jar) for jar in jar_paths)
    if engine.kind == "connect":
        # The Connect server's class path is the embedded runtime's: the same archive serves it.
        add_to_driver_options(settings, jar_paths)
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
        KINDS[engine.kind],
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


WARM_UP_UNFINISHED = "spark_cdc engine warm-up did not finish"
WARM_UP_UNFINISHED_MEANS = (
    "the engine's warm-up did not finish within its 180 s (a busy machine): the engine is "
    "ready; your first commands of each kind run without its head start, a few seconds slower"
)


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
    # The server's Python workers (a stream's foreachBatch on Connect) run this Python, which
    # has the project's package, whatever `python3` is on the PATH.
    env.setdefault("PYSPARK_PYTHON", sys.executable)
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
        # Relative paths the server is handed resolve against the home, whoever started it.
        cwd=engine.home,
    )
    stopping = {"now": False}

    def stop(*_: object) -> None:
        stopping["now"] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    state = {
        "kind": engine.kind,
        "supervisor_pid": os.getpid(),
        "supervisor_started": psutil.Process().create_time(),
        "server_pid": server.pid,
        "port": port,
        "url": engine.url(port) if engine.kind == "thrift" else f"sc://localhost:{port}",
        "started_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "idle_timeout": idle_timeout,
        "log": str(engine.log_file),
    }
    last_used = time.monotonic()
    answering = False
    try:
        while not stopping["now"] and server.poll() is None:
            time.sleep(0.5 if not answering else 2)
            if not answering and _port_open(port):
                # Clients find the engine only once it answers and is warm; the idle clock
                # starts then.
                answering = True
                if engine.kind == "connect":
                    _warm_up(engine, port, env, log, stopping)
                _write_state(engine.state_file, state)
            if not answering or established_connections(server.pid, port) > 0:
                last_used = time.monotonic()
            elif time.monotonic() - last_used > idle_timeout:
                break
    finally:
        # Gone from the state first: no client is handed a server that is stopping.
        engine.state_file.unlink(missing_ok=True)
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return 0


def _warm_up(
    engine: Engine, port: int, env: dict[str, str], log: Any, stopping: dict[str, bool]
) -> None:
    """Run the warm-up client (spark_cdc.engine.warmup) on the new server, its output in the
    engine's log, until it ends, 180 s pass or the supervisor is told to stop;
    ``SPARK_CDC_ENGINE_WARMUP=0`` skips it. A failed warm-up is only logged."""
    if warmup_rounds() == 0:
        return
    command = [sys.executable, "-m", "spark_cdc.engine.warmup", str(engine.folder), str(port)]
    client = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while client.poll() is None and not stopping["now"] and time.monotonic() < deadline:
        time.sleep(0.2)
    if client.poll() is None:
        client.kill()
    if client.wait() != 0:
        log.write(f"{WARM_UP_UNFINISHED} (the engine is usable)\n".encode())
        log.flush()


def start(
    home: Path | None = None,
    kind: str = "connect",
    port: int | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    wait: float = 300.0,
    announce: bool = False,
) -> dict:
    """Start the engine of ``home`` unless it runs; wait until it answers; return its state.
    ``port``: a fixed port (default: a free one chosen at start, recorded in the state);
    ``announce``: say on stderr that an engine is being started (a command that starts it on
    demand)."""
    engine = Engine((home or default_home()).resolve(), kind)
    running = engine.state()
    if running is not None:
        return running
    try:
        warmup_rounds()  # a bad setting is refused here, not found later in the engine's log
    except ValueError as error:
        raise EngineError(str(error)) from None
    with _start_lock(engine, wait):
        return engine.state() or _spawn(engine, port, idle_timeout, wait, announce)


def _spawn(
    engine: Engine, port: int | None, idle_timeout: float, wait: float, announce: bool
) -> dict:
    """Start the supervisor (under the start lock) and wait until the server answers."""
    kind = engine.kind
    holder = holder_of(engine.home)
    if holder is not None:
        raise HomeInUseError(
            f"SPARK_CDC_HOME {engine.home} is in use by {holder}: the engine needs the home's "
            "metastore to itself. Wait for that process to end, or use another SPARK_CDC_HOME."
        )
    if port is not None and _port_open(port):
        raise EngineError(
            f"port {port} on {LOOPBACK} is in use by another program: pass another --port, or "
            "none (a free port is chosen)"
        )
    port = port or _free_port()
    if announce:
        print(
            f"spark_cdc: starting the warm {kind} engine of {engine.home} on port {port} "
            f"(about 40 s the first time; it stops after {idle_timeout / 60:.0f} min without a "
            f"client, or on 'spark-cdc engine stop'; log {engine.log_file})",
            file=sys.stderr,
            flush=True,
        )
    log_start = engine.log_file.stat().st_size if engine.log_file.exists() else 0
    supervisor = subprocess.Popen(
        supervisor_command(engine, port, idle_timeout),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=engine.log_file.open("ab"),
        start_new_session=True,
    )
    started = time.monotonic()
    deadline, said = started + wait, started
    while time.monotonic() < deadline:
        if supervisor.poll() is not None:
            raise EngineError(
                f"the {kind} engine stopped while starting (exit code {supervisor.returncode}); "
                f"see {engine.log_file}:\n{_log_tail(engine.log_file)}"
            )
        state = engine.state()
        if state is not None:
            if WARM_UP_UNFINISHED in _log_text(engine.log_file, log_start):
                print(f"spark_cdc: {WARM_UP_UNFINISHED_MEANS}", file=sys.stderr, flush=True)
            return state
        if time.monotonic() - said >= progress_interval():
            said = time.monotonic()
            doing = (
                "Spark answers; warming up (a first query of each kind, so that yours start fast)"
                if _port_open(port)
                else "starting Spark's server"
            )
            print(
                f"spark_cdc: the {kind} engine is starting: {doing} ({said - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(0.5)
    supervisor.terminate()
    raise EngineError(
        f"the {kind} engine did not answer within {wait:.0f} s; see {engine.log_file}"
    )


def supervisor_command(engine: Engine, port: int, idle_timeout: float) -> list[str]:
    """The supervisor process's command line (``python -m spark_cdc.engine.server serve ...``)."""
    return [
        sys.executable,
        "-m",
        "spark_cdc.engine.server",
        "serve",
        str(engine.home),
        engine.kind,
        str(port),
        str(idle_timeout),
    ]


def _log_text(path: Path, start: int = 0) -> str:
    """The log's text from byte ``start`` on (what this start of the engine wrote)."""
    try:
        with path.open("rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace")
    except OSError:
        return ""


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    interesting = [line for line in text if "ERROR" in line or "Exception" in line]
    return "\n".join((interesting or text)[-lines:])


def main(argv: list[str]) -> int:
    """``python -m spark_cdc.engine.server serve HOME KIND PORT IDLE_TIMEOUT`` (:func:`start`)."""
    _, home, kind, port, idle = argv
    return serve(Engine(Path(home), kind), int(port), float(idle))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
