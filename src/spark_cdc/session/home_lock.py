"""One process at a time per ``SPARK_CDC_HOME``: the embedded Derby metastore's own rule, enforced
up front so that a second process fails in milliseconds with a message that names the holder.

Derby refuses a second process only after Hive's metastore client has retried for minutes, and
its reason (``XSDB6``) is buried in the logs. The lock is an advisory ``flock`` on
``<home>/.spark_cdc.lock``, held for the life of the process: the kernel releases it when the
process ends, however it ends (a killed run never leaves a stale lock behind).
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO


def default_home() -> Path:
    """Folder of the persistent warehouse and metastore: ``$SPARK_CDC_HOME`` or ``./.spark_cdc``."""
    return Path(os.environ.get("SPARK_CDC_HOME", ".spark_cdc")).expanduser().resolve()


LOCK_NAME = ".spark_cdc.lock"

_held: dict[Path, IO[str]] = {}


class HomeInUseError(RuntimeError):
    """Another process holds the embedded metastore of this home."""


def _describe_self() -> str:
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    command = shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200] if sys.argv else "python"
    return f"pid {os.getpid()}: {command}, since {started}"


def acquire_home(home: Path, hint: str = "", description: str | None = None) -> None:
    """Hold ``home`` for this process, or raise :class:`HomeInUseError` naming its holder;
    ``description`` says what this process is (default: its pid and command line)."""
    home = home.resolve()
    if home in _held:
        return
    home.mkdir(parents=True, exist_ok=True)
    path = home / LOCK_NAME
    handle = path.open("a+", encoding="utf-8")
    if not _lock_now_or_soon(handle):
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise HomeInUseError(
            f"SPARK_CDC_HOME {home} is in use by {holder}. Its embedded Derby metastore "
            "allows one process at a time: wait for that process to end, or point "
            "SPARK_CDC_HOME at another folder, or "
            + (hint or "run commands through the warm engine (SPARK_CDC_TARGET=engine)")
            + "."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write((description or _describe_self()) + "\n")
    handle.flush()
    _held[home] = handle


def _lock_now_or_soon(handle: IO[str], tries: int = 10) -> bool:
    """Take the exclusive lock, retrying briefly: :func:`holder_of` probes the lock for an
    instant, which must not make a legitimate acquisition fail."""
    for attempt in range(tries):
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt < tries - 1:
                time.sleep(0.02)
    return False


def lock_descriptor(home: Path) -> int:
    """The file descriptor of the lock this process holds on ``home`` (to hand to a child)."""
    return _held[home.resolve()].fileno()


def release_home(home: Path) -> None:
    """Give ``home`` up (the lock also ends with the process)."""
    handle = _held.pop(home.resolve(), None)
    if handle is not None:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def holder_of(home: Path) -> str | None:
    """Who holds ``home`` now (None when nobody does). Probes with a shared lock held for an
    instant (acquire_home retries past it)."""
    path = home.resolve() / LOCK_NAME
    if not path.exists():
        return None
    with path.open("a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            return handle.read().strip() or "another process"
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None
