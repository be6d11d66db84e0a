"""A class-data-sharing archive that makes every embedded Spark process start faster.

Each command on the embedded runtime starts a JVM that loads and verifies the same twenty
thousand classes of Spark, Hive and Delta before its first query. The JVM can instead map them
from an archive written once (Java's dynamic CDS: ``-XX:ArchiveClassesAtExit`` then
``-XX:SharedArchiveFile``); measured here, a new process reached its first Delta write 5-6 s
sooner (15.5-17.5 s instead of 21.6-22.1 s).

The setup step builds the archive (``python -m spark_cdc.engine.class_archive_build``): a scratch
session runs the statements dbt commands run, the JVM writes the archive when it exits, and only
then is the file moved into place (a half-written archive would crash the JVM that maps it). The
archive is named after the Java binary, pyspark (version and folder) and the Delta jars, so an
upgrade of any of them, or another virtualenv, gives a new name and the old archive is simply
not used. A missing archive costs nothing: the JVM starts as it always did.
``SPARK_CDC_CLASS_ARCHIVE=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import shutil
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
