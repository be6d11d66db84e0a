"""Fetch the JVM jars the project's sessions load, with Maven: Delta Lake's (matching the installed
pyspark and delta-spark) and Spark's Kafka connector (matching pyspark), which the streams read
Kafka topics with.

Maven is used (not Spark's Ivy resolution at session start) so that the download happens once, in
the setup step, honours the user's ``~/.m2/settings.xml`` (proxies, mirrors, offline repositories)
and leaves a plain folder of jars that every Spark session of the project loads with ``spark.jars``.

Run ``python -m spark_cdc.session.jars`` to fetch them; it is a no-op when they are already there.
Delta's jars are fetched by the first session too when missing; the Kafka connector's only by this
command (the setup step runs it) or by a stream that reads Kafka, and every session loads them when
they are there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

SCALA_BINARY_VERSION = "2.13"

_POM_TEMPLATE = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>spark-cdc</groupId>
  <artifactId>jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""
# What Spark's Kafka connector needs beside pyspark's own jars (the rest of its dependencies,
# Hadoop's client, Scala, lz4, snappy, slf4j, are in pyspark/jars).
KAFKA_ARTIFACTS = (
    "spark-sql-kafka-0-10_{scala}",
    "spark-token-provider-kafka-0-10_{scala}",
    "kafka-clients",
    "commons-pool2",
)


def delta_artifact() -> tuple[str, str]:
    """Return (artifactId, version) of the Delta jar for the installed pyspark and delta-spark."""
    spark_major_minor = ".".join(version("pyspark").split(".")[:2])
    return f"delta-spark_{spark_major_minor}_{SCALA_BINARY_VERSION}", version("delta-spark")


def default_jars_dir() -> Path:
    """Folder holding the jars: ``$SPARK_CDC_JARS_DIR`` or ``~/.cache/spark_cdc/jars/<version>``."""
    configured = os.environ.get("SPARK_CDC_JARS_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    artifact, delta_version = delta_artifact()
    return Path.home() / ".cache" / "spark_cdc" / "jars" / f"{artifact}-{delta_version}"


def delta_jars(jars_dir: Path | None = None) -> list[Path]:
    """Paths of the Delta jars in ``jars_dir`` (empty when they have not been fetched)."""
    folder = jars_dir or default_jars_dir()
    artifact, delta_version = delta_artifact()
    main_jar = folder / f"{artifact}-{delta_version}.jar"
    if not main_jar.exists():
        return []
    return sorted(folder.glob("*.jar"))


def fetch_delta_jars(jars_dir: Path | None = None, quiet: bool = True) -> list[Path]:
    """Download delta-spark and delta-storage (no other transitive jars: Spark ships those)."""
    folder = jars_dir or default_jars_dir()
    found = delta_jars(folder)
    if found:
        return found
    artifact, delta_version = delta_artifact()
    copy_dependencies(
        ("io.delta", artifact, delta_version), folder, [artifact, "delta-storage"], quiet
    )
    found = delta_jars(folder)
    if not found:
        raise RuntimeError(f"Maven finished but no Delta jar is in {folder}")
    return found


def kafka_artifact() -> tuple[str, str]:
    """Return (artifactId, version) of Spark's Kafka connector for the installed pyspark."""
    return f"spark-sql-kafka-0-10_{SCALA_BINARY_VERSION}", version("pyspark")


def default_kafka_jars_dir() -> Path:
    """Folder of the Kafka connector's jars: ``$SPARK_CDC_KAFKA_JARS_DIR`` or
    ``~/.cache/spark_cdc/jars/spark-sql-kafka-0-10_<scala>-<pyspark version>``."""
    configured = os.environ.get("SPARK_CDC_KAFKA_JARS_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    artifact, spark_version = kafka_artifact()
    return Path.home() / ".cache" / "spark_cdc" / "jars" / f"{artifact}-{spark_version}"


def kafka_jars(jars_dir: Path | None = None) -> list[Path]:
    """Paths of the Kafka connector's jars (empty when they have not been fetched)."""
    folder = jars_dir or default_kafka_jars_dir()
    artifact, spark_version = kafka_artifact()
    if not (folder / f"{artifact}-{spark_version}.jar").exists():
        return []
    return sorted(folder.glob("*.jar"))


def fetch_kafka_jars(jars_dir: Path | None = None, quiet: bool = True) -> list[Path]:
    """Download Spark's Kafka connector and what it needs beyond pyspark's jars."""
    folder = jars_dir or default_kafka_jars_dir()
    found = kafka_jars(folder)
    if found:
        return found
    artifact, spark_version = kafka_artifact()
    wanted = [name.format(scala=SCALA_BINARY_VERSION) for name in KAFKA_ARTIFACTS]
    copy_dependencies(("org.apache.spark", artifact, spark_version), folder, wanted, quiet)
    found = kafka_jars(folder)
    if not found:
        raise RuntimeError(f"Maven finished but no Kafka connector jar is in {folder}")
    return found


def session_jars() -> list[Path]:
    """The jars every session of the project loads: Delta's (fetched when missing) and the
    Kafka connector's when they have been fetched."""
    return (delta_jars() or fetch_delta_jars()) + kafka_jars()


def copy_dependencies(
    coordinates: tuple[str, str, str],
    folder: Path,
    artifacts: list[str] | None = None,
    quiet: bool = True,
) -> None:
    """Copy the runtime dependency tree of ``coordinates`` (group, artifact, version), only its
    ``artifacts`` when given, into ``folder`` with Maven (its ``~/.m2`` settings: proxies,
    mirrors, offline)."""
    group, artifact, wanted_version = coordinates
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(
            f"Maven (mvn) is needed once to fetch {group}:{artifact}; install it "
            "(apt-get install maven) or put the jars in the folder of its setting yourself "
            "(docs/configuration.md)."
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Copied into a folder of its own, then renamed into place: a session that starts meanwhile
    # (or a second setup) never sees half of the jars.
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        with tempfile.TemporaryDirectory() as work:
            pom = Path(work) / "pom.xml"
            pom.write_text(
                _POM_TEMPLATE.format(group=group, artifact=artifact, version=wanted_version)
            )
            command = [
                mvn,
                "-B",
                "-f",
                str(pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={staging}",
                "-DincludeScope=runtime",
            ]
            if artifacts:
                command.append("-DincludeArtifactIds=" + ",".join(artifacts))
            if quiet:
                command.insert(2, "-q")
            result = subprocess.run(command, capture_output=quiet, text=True, check=False)
            if result.returncode != 0:
                detail = (result.stdout or "") + (result.stderr or "")
                raise RuntimeError(
                    f"Fetching {group}:{artifact}:{wanted_version} with Maven failed.\n{detail}"
                )
        # onto a missing or empty folder; another process may have put the jars there first
        with contextlib.suppress(OSError):
            staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main() -> int:
    """Fetch the jars and print where they are."""
    jars = fetch_delta_jars(quiet=True) + fetch_kafka_jars(quiet=True)
    for jar in jars:
        print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())
