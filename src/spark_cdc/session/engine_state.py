"""The warm engine of a home, as the home's other users see it: its state file, whether it runs,
its clients, and how to stop it. The embedded runtime asks here before it takes a home; the
engine's supervisor (:mod:`spark_cdc.engine.server`) writes what this module reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from spark_cdc.session.home_lock import HomeInUseError, default_home

KINDS = {
    "connect": "org.apache.spark.sql.connect.service.SparkConnectServer",
    "thrift": "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
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
        """The running engine's state (None when it is not running): its supervisor must be the
        very process that wrote it (pid and creation time), so a state file left by a reboot or
        a kill, whose pid another process may now have, counts as no engine."""
        try:
            state = json.loads(self.state_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        if process_of(state.get("supervisor_pid"), state.get("supervisor_started")) is None:
            return None
        return state

    def token(self) -> str:
        """The Connect token of this home (created, user-only, at first use)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.token_file.exists():
            self._publish_token(secrets.token_urlsafe(32))
        os.chmod(self.token_file, 0o600)
        return self.token_file.read_text().strip()

    def _publish_token(self, token: str) -> None:
        """Write ``token`` whole, then link it into place: a concurrent first reader finds no
        file or the whole token, never an empty one; of two first writers, the first link wins."""
        descriptor, draft = tempfile.mkstemp(dir=self.folder, prefix=".token-")
        try:
            with os.fdopen(descriptor, "w") as handle:  # mkstemp's file is user-only (0600)
                handle.write(token)
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(draft, self.token_file)
        finally:
            os.unlink(draft)

    def url(self, port: int) -> str:
        """How clients reach it: a Spark Connect URL with the token, or a Thrift host:port."""
        if self.kind == "connect":
            return f"sc://localhost:{port}/;token={self.token()}"
        return f"{LOOPBACK}:{port}"


def process_of(pid: object, started: object) -> psutil.Process | None:
    """The process ``pid`` if it runs and was created at ``started`` (a pid reused after a
    reboot or a kill is another process: its creation time differs)."""
    if not isinstance(pid, int) or not isinstance(started, (int, float)):
        return None
    try:
        process = psutil.Process(pid)
        if abs(process.create_time() - started) > 0.01:
            return None
        if process.status() == psutil.STATUS_ZOMBIE:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # a finished child of this process: reap it
            return None
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return process


def established_connections(server_pid: int, port: int) -> int:
    """Clients connected to the server's port now (its own sockets, through psutil)."""
    try:
        connections = psutil.Process(server_pid).net_connections(kind="tcp")
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0
    return sum(
        1
        for connection in connections
        if connection.status == psutil.CONN_ESTABLISHED and connection.laddr.port == port
    )


def make_way_for_embedded(home: Path) -> None:
    """Before an embedded command takes ``home``: an idle engine of the home (no client
    connected) is stopped, as a build daemon gives way; a busy one is named in the error."""
    for kind in KINDS:
        state = status(home, kind)
        if state is None:
            continue
        if state["clients"]:
            raise HomeInUseError(
                f"SPARK_CDC_HOME {home} is in use by its warm {kind} engine, which has "
                f"{state['clients']} client(s) now: run this command through it "
                f"(SPARK_CDC_TARGET={'engine' if kind == 'connect' else 'thrift'}), or wait for "
                f"them and stop it (spark-cdc engine stop{' --thrift' if kind == 'thrift' else ''})"
            )
        print(
            f"spark_cdc: stopping the idle {kind} engine of {home} (no client) to run on the "
            "embedded runtime; the next engine command starts it again",
            file=sys.stderr,
            flush=True,
        )
        stop(home, kind)


def stop(home: Path | None = None, kind: str = "connect", wait: float = 60.0) -> bool:
    """Stop the engine of ``home``; False when it was not running."""
    engine = Engine((home or default_home()).resolve(), kind)
    state = engine.state()
    if state is None:
        return False
    supervisor = process_of(state["supervisor_pid"], state["supervisor_started"])
    if supervisor is None:
        return False
    supervisor.terminate()
    # Polled rather than waited on: the supervisor may be another process's child, left a
    # zombie until that process reaps it (a zombie has stopped).
    deadline = time.monotonic() + wait
    while process_of(state["supervisor_pid"], state["supervisor_started"]) is not None:
        if time.monotonic() > deadline:
            raise EngineError(
                f"the engine (pid {state['supervisor_pid']}) did not stop in {wait:.0f} s"
            )
        time.sleep(0.2)
    return True


def status(home: Path | None = None, kind: str = "connect") -> dict | None:
    """The running engine's state with its clients now (None when it is not running)."""
    engine = Engine((home or default_home()).resolve(), kind)
    state = engine.state()
    if state is None:
        return None
    return {**state, "clients": established_connections(state["server_pid"], state["port"])}
