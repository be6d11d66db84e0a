"""Building the JVM class archive (:mod:`spark_cdc.session.class_archive`):
``python -m spark_cdc.engine.class_archive_build``, run by the setup step. A child process runs a
scratch session and the statements dbt commands run; its JVM writes the archive as it exits, and
only a complete file is moved into place. Old archives are pruned.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_cdc.session.class_archive import DUMP_SETTING, SETTING, archive_file
from spark_cdc.session.jars import session_jars

_DUMP = "from spark_cdc.engine.class_archive_build import _dump_workload as w; w()"


def _dump_workload() -> None:
    """Run in the child process that writes the archive: a session on a scratch home and one
    round of what dbt commands do (the engine warm-up's statements)."""
    from spark_cdc.engine.warmup import workload
    from spark_cdc.session.runtime import get_or_create_session

    spark = get_or_create_session()
    jvm = spark.sparkContext._gateway.proc
    spark.sql("create schema if not exists class_archive")
    workload(spark, "class_archive")
    spark.stop()
    # The JVM writes the archive as it exits, after its input closes: wait for the whole file.
    jvm.stdin.close()
    if jvm.wait(timeout=300) != 0:
        raise SystemExit(f"the JVM exited with {jvm.returncode} while writing the archive")


TIMEOUT_SETTING = "SPARK_CDC_CLASS_ARCHIVE_TIMEOUT"
DEFAULT_TIMEOUT = 600.0


def build_timeout() -> float:
    """Seconds the build may take (``SPARK_CDC_CLASS_ARCHIVE_TIMEOUT``, 600 by default)."""
    try:
        return float(os.environ.get(TIMEOUT_SETTING, DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def build_archive(timeout: float | None = None) -> Path | None:
    """Build the archive unless it is there; its path (None when there is no java, or it is
    turned off). Raises RuntimeError when the JVM did not write a complete archive in time; the
    child process and its JVM are stopped with the build (their own process group)."""
    if os.environ.get(SETTING, "1").strip() == "0":
        return None
    timeout = build_timeout() if timeout is None else timeout
    jars = session_jars()
    target = archive_file(jars)
    if target is None or target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    print("spark_cdc: building the JVM class archive (once, about a minute)", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="spark_cdc_class_archive_") as scratch:
        partial = target.parent / f".{target.name}.{os.getpid()}.partial"
        env = {
            **os.environ,
            DUMP_SETTING: str(partial),
            "SPARK_CDC_HOME": str(Path(scratch) / "home"),
            "SPARK_CDC_MASTER": "local[2]",
        }
        env.pop("SPARK_CDC_LOG_LEVEL", None)
        try:
            returncode, stderr = _run_workload(env, timeout)
            if returncode != 0 or not partial.is_file():
                raise RuntimeError(
                    "the JVM class archive could not be built (Spark still works without it): "
                    + (stderr.strip().splitlines() or ["no output"])[-1]
                )
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    prune_replaced(target)
    prune_stale(target.parent, keep=target)
    return target


def _run_workload(env: dict[str, str], timeout: float) -> tuple[int, str]:
    """(return code, stderr) of the child that writes the archive; on a timeout its whole
    process group (the child and its JVM) is killed and RuntimeError raised."""
    child = subprocess.Popen(
        [sys.executable, "-c", _DUMP],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise RuntimeError(
            f"the JVM class archive was not built within {timeout:.0f} s and was stopped "
            "(Spark works without it; the next setup tries again)"
        ) from None
    finally:
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    return child.returncode, stderr


def prune_replaced(current: Path) -> list[Path]:
    """Remove the other archives of ``current``'s virtualenv folder (same install tag): built
    for jars that a reinstall in that folder replaced, no JVM can map them any more."""
    tag = current.name.split("-")[1]
    removed = []
    for archive in current.parent.glob(f"spark-{tag}-*.jsa"):
        if archive != current:
            archive.unlink(missing_ok=True)
            removed.append(archive)
    return removed


STALE_AFTER_DAYS = 30


def prune_stale(folder: Path, keep: Path, days: float = STALE_AFTER_DAYS) -> list[Path]:
    """Remove the archives (about 230 MB each) that no JVM has opened for ``days`` days: those of
    an older Java, pyspark or virtualenv. A JVM that maps one updates its access time (on a file
    system mounted ``noatime`` an archive in use may go: its virtualenv's next bootstrap builds it
    again, and its JVMs start without one meanwhile)."""
    cutoff = time.time() - days * 86_400
    removed = []
    for archive in folder.glob("spark-*.jsa"):
        if archive != keep and max(archive.stat().st_atime, archive.stat().st_mtime) < cutoff:
            archive.unlink(missing_ok=True)
            removed.append(archive)
    return removed


def main() -> int:
    """Build the archive (a no-op when it is there) and print where it is."""
    try:
        archive = build_archive()
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        # a speed-up never fails the set-up: one warning line, and the next setup tries again
        print(f"spark_cdc: warning: {error}", file=sys.stderr)
        return 0
    if archive is not None:
        print(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
