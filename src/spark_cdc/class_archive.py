"""A class-data-sharing archive that makes every embedded Spark process start faster.

Each command on the embedded runtime starts a JVM that loads and verifies the same twenty
thousand classes of Spark, Hive and Delta before its first query. The JVM can instead map them
from an archive written once (Java's dynamic CDS: ``-XX:ArchiveClassesAtExit`` then
``-XX:SharedArchiveFile``); measured here, a new process reached its first Delta write 5-6 s
sooner (15.5-17.5 s instead of 21.6-22.1 s).

The setup step builds the archive (``python -m spark_cdc.class_archive``): a scratch session runs
the statements dbt commands run, the JVM writes the archive when it exits, and only then is the
file moved into place (a half-written archive would crash the JVM that maps it). The archive is
named after the Java binary, pyspark (version and folder) and the Delta jars, so an upgrade of any
of them, or another virtualenv, gives a new name and the old archive is simply not used. A
missing archive costs nothing: the JVM starts as it always did. ``SPARK_CDC_CLASS_ARCHIVE=0``
turns it off.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

SETTING = "SPARK_CDC_CLASS_ARCHIVE"
DUMP_SETTING = "SPARK_CDC_CLASS_ARCHIVE_DUMP"
# The archive's own messages (a classpath that changed, an archive of another JVM) are not the
# user's business: the JVM then starts without it.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def java_binary() -> Path | None:
    """The ``java`` that spark-submit runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    found = Path(java_home) / "bin" / "java" if java_home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def class_path_jars(jars: list[Path]) -> list[Path]:
    """The jars the driver JVM loads classes from: pyspark's own and the Delta jars."""
    import pyspark

    spark_jars = Path(pyspark.__file__).resolve().parent / "jars"
    return sorted(spark_jars.glob("*.jar")) + sorted(jars)


def archive_key(java: Path, jars: list[Path]) -> str:
    """What the archive depends on, hashed: the Java binary (path, size, time), pyspark's
    version and folder (another virtualenv needs its own archive) and every class-path jar's
    path, size and modification time. The JVM refuses, silently here, an archive whose jars have
    another size or time: a virtualenv made again in the same folder installs the same jars with
    new times, so it must get a new archive, not the old one that no JVM would map."""
    import pyspark

    stat = java.stat()
    spark_home = str(Path(pyspark.__file__).resolve().parent)
    parts = [str(java), str(stat.st_size), str(stat.st_mtime_ns), version("pyspark"), spark_home]
    for jar in class_path_jars(jars):
        jar_stat = jar.stat()
        parts.append(f"{jar}:{jar_stat.st_size}:{jar_stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def archive_dir() -> Path:
    """``$SPARK_CDC_CLASS_ARCHIVE_DIR`` or ``~/.cache/spark_cdc/class-archives``."""
    configured = os.environ.get("SPARK_CDC_CLASS_ARCHIVE_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    return Path.home() / ".cache" / "spark_cdc" / "class-archives"


def install_tag() -> str:
    """A short tag of pyspark's folder: every archive built for one virtualenv folder starts with
    it, so a new one replaces the others (an install made again in that folder)."""
    import pyspark

    spark_home = str(Path(pyspark.__file__).resolve().parent)
    return hashlib.sha256(spark_home.encode()).hexdigest()[:8]


def archive_file(jars: list[Path]) -> Path | None:
    """Where the archive for this Java, pyspark and these jars is (None without a java)."""
    java = java_binary()
    if java is None:
        return None
    return archive_dir() / f"spark-{install_tag()}-{archive_key(java, jars)}.jsa"


def driver_java_options(jars: list[Path]) -> list[str]:
    """The driver JVM's options for the archive: write it (while the setup step builds it), map
    it (when it is there), or nothing (not built yet, or turned off)."""
    dump = os.environ.get(DUMP_SETTING)
    if dump:
        return [f'-XX:ArchiveClassesAtExit="{dump}"', QUIET]
    if os.environ.get(SETTING, "1").strip() == "0":
        return []
    archive = archive_file(jars)
    if archive is None or not archive.is_file():
        return []
    return [f'-XX:SharedArchiveFile="{archive}"', QUIET]


def add_to_driver_options(settings: dict[str, str], jars: list[Path]) -> None:
    """Append the archive's options to ``spark.driver.extraJavaOptions`` in ``settings``."""
    options = driver_java_options(jars)
    if options:
        current = settings.get("spark.driver.extraJavaOptions", "")
        settings["spark.driver.extraJavaOptions"] = " ".join([current, *options]).strip()


def _dump_workload() -> None:
    """Run in the child process that writes the archive: a session on a scratch home and one
    round of what dbt commands do (the engine warm-up's statements)."""
    from spark_cdc.engine_warmup import workload
    from spark_cdc.runtime import get_or_create_session

    spark = get_or_create_session()
    jvm = spark.sparkContext._gateway.proc
    spark.sql("create schema if not exists class_archive")
    workload(spark, "class_archive")
    spark.stop()
    # The JVM writes the archive as it exits, after its input closes: wait for the whole file.
    jvm.stdin.close()
    if jvm.wait(timeout=300) != 0:
        raise SystemExit(f"the JVM exited with {jvm.returncode} while writing the archive")


def build_archive(timeout: float = 600) -> Path | None:
    """Build the archive unless it is there; its path (None when there is no java, or it is
    turned off). Raises when the JVM did not write a complete archive."""
    from spark_cdc.jars import delta_jars, fetch_delta_jars

    if os.environ.get(SETTING, "1").strip() == "0":
        return None
    jars = delta_jars() or fetch_delta_jars()
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
        done = subprocess.run(
            [sys.executable, "-c", "from spark_cdc.class_archive import _dump_workload as w; w()"],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        try:
            if done.returncode != 0 or not partial.is_file():
                raise RuntimeError(
                    "the JVM class archive could not be built (Spark still works without it): "
                    + (done.stderr.strip().splitlines() or ["no output"])[-1]
                )
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    prune_replaced(target)
    prune_stale(target.parent, keep=target)
    return target


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
    except RuntimeError as error:
        print(f"spark_cdc: {error}", file=sys.stderr)
        return 0
    if archive is not None:
        print(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
