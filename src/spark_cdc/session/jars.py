"""Fetch the Delta Lake JVM jars that match the installed pyspark and delta-spark, with Maven.

Maven is used (not Spark's Ivy resolution at session start) so that the download happens once, in
the setup step, honours the user's ``~/.m2/settings.xml`` (proxies, mirrors, offline repositories)
and leaves a plain folder of jars that every Spark session of the project loads with ``spark.jars``.

Run ``python -m spark_cdc.session.jars`` to fetch them; it is a no-op when they are already there.
"""

from __future__ import annotations

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
  <artifactId>delta-jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.delta</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{delta_version}</version>
    </dependency>
  </dependencies>
</project>
"""


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
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(
            "Maven (mvn) is needed once to fetch the Delta Lake jars; install it "
            "(apt-get install maven) or put the jars in $SPARK_CDC_JARS_DIR yourself."
        )
    artifact, delta_version = delta_artifact()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(_POM_TEMPLATE.format(artifact=artifact, delta_version=delta_version))
        command = [
            mvn,
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={folder}",
            "-DincludeGroupIds=io.delta",
            "-DincludeArtifactIds=" + f"{artifact},delta-storage",
        ]
        if quiet:
            command.insert(2, "-q")
        result = subprocess.run(command, capture_output=quiet, text=True, check=False)
        if result.returncode != 0:
            detail = (result.stdout or "") + (result.stderr or "")
            raise RuntimeError(
                f"Fetching io.delta:{artifact}:{delta_version} with Maven failed.\n{detail}"
            )
    found = delta_jars(folder)
    if not found:
        raise RuntimeError(f"Maven finished but no Delta jar is in {folder}")
    return found


def main() -> int:
    """Fetch the jars and print where they are."""
    jars = fetch_delta_jars(quiet=True)
    for jar in jars:
        print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())
