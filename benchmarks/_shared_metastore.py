"""A metastore several Spark processes share, for the benchmarks that run event groups in
processes of their own: a Derby network server on loopback (Derby's ``derbynet`` and
``derbyclient`` from Maven Central, the version pyspark ships Derby at), and the session settings
that point a process at it. In production the same settings name the team's metastore database
(or ``spark.hadoop.hive.metastore.uris`` a metastore service); any such setting lets several
processes share one home (spark_cdc.session.runtime.uses_embedded_metastore)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark

from spark_cdc.session.jars import copy_dependencies

DERBY_GROUP = "org.apache.derby"


def derby_version() -> str:
    """The Derby version pyspark ships (its jars folder's ``derby-<version>.jar``)."""
    (jar,) = (Path(pyspark.__file__).parent / "jars").glob("derby-[0-9]*.jar")
    return jar.stem.removeprefix("derby-")


def derby_jars(folder: Path) -> dict[str, Path]:
    """Derby's network server and client jars (fetched with Maven once): by artifact."""
    version = derby_version()
    wanted = ("derbynet", "derbyclient")
    if not all((folder / f"{name}-{version}.jar").exists() for name in wanted):
        for name in wanted:
            copy_dependencies((DERBY_GROUP, name, version), folder / name, [name])
            for jar in (folder / name).glob("*.jar"):
                jar.replace(folder / jar.name)
    return {name: folder / f"{name}-{version}.jar" for name in wanted}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def session_extra(port: int, client_jar: Path) -> dict[str, str]:
    """Settings of a session whose metastore is the Derby network server on ``port``."""
    return {
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby://127.0.0.1:{port}/metastore;create=true"
        ),
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.ClientDriver",
        "spark.driver.extraClassPath": str(client_jar),
    }


@contextlib.contextmanager
def derby_network_server(work: Path, jars_folder: Path) -> Iterator[dict[str, str]]:
    """A Derby network server on loopback for the block's life (its databases under ``work``):
    the session settings of a process that uses it as its metastore."""
    jars = derby_jars(jars_folder)
    pyspark_jars = Path(pyspark.__file__).parent / "jars"
    classpath = [
        *(pyspark_jars / f"{name}-{derby_version()}.jar" for name in ("derby", "derbyshared")),
        pyspark_jars / f"derbytools-{derby_version()}.jar",
        jars["derbynet"],
    ]
    port = _free_port()
    work.mkdir(parents=True, exist_ok=True)
    log = (work / "derby_server.log").open("w")
    server = subprocess.Popen(
        [
            "java",
            f"-Dderby.system.home={work}",
            "-cp",
            ":".join(str(jar) for jar in classpath),
            "org.apache.derby.drda.NetworkServerControl",
            "start",
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-noSecurityManager",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while "ready to accept connections" not in (work / "derby_server.log").read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Derby network server did not start: see {log.name}")
            time.sleep(0.5)
        yield session_extra(port, jars["derbyclient"])
    finally:
        server.terminate()
        server.wait(30)
        log.close()
