"""Progress lines of long command steps: what a step does when it starts, and, while it runs,
that it still does (a first Spark start fetches jars and may take minutes in silence)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

INTERVAL_SETTING = "SPARK_CDC_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 30.0


def interval() -> float:
    """Seconds between two "still working" lines (``SPARK_CDC_PROGRESS_SECONDS``; 30)."""
    try:
        seconds = float(os.environ.get(INTERVAL_SETTING, DEFAULT_INTERVAL))
    except ValueError:
        return DEFAULT_INTERVAL
    return seconds if seconds > 0 else DEFAULT_INTERVAL


def say(text: str) -> None:
    """One progress line on stderr (the command's results stay alone on stdout)."""
    print(f"spark-cdc: {text}", file=sys.stderr, flush=True)


@contextmanager
def step(what: str) -> Iterator[None]:
    """Say ``what`` starts, then every :func:`interval` seconds that it still runs."""
    say(f"{what} ...")
    started = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(interval()):
            say(f"{what}: still working ({time.monotonic() - started:.0f} s)")

    thread = threading.Thread(target=beat, name="spark-cdc-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
