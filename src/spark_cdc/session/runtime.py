"""The project's Spark runtime: a SparkSession with Delta Lake and a persistent Hive metastore.

Every entry point (the dbt adapter plugin, the main job, the generators, the benchmarks and the
tests) gets its session from :func:`get_or_create_session`, so the settings live in one place.

Static settings (jars, warehouse, metastore, memory) only take effect when the session is created;
a session that already exists in the process is reused as it is.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spark_cdc.core.pyspark_logs import silence_query_context_logs
from spark_cdc.session.class_archive import add_to_driver_options
from spark_cdc.session.engine_state import make_way_for_embedded
from spark_cdc.session.home_lock import acquire_home, default_home
from spark_cdc.session.jars import session_jars
from spark_cdc.session.master_check import check_reachable, wait_for_executors

DEFAULT_MASTER = "local[2]"
SESSION_TIME_ZONE = "UTC"
# The JVM's logging (package data of spark_cdc: warnings and errors, known noise muted).
LOG_CONFIG = Path(__file__).resolve().parents[1] / "conf" / "log4j2.properties"


def java_option(name: str, value: str) -> str:
    """``-Dname=value`` quoted for Spark's option parser (a path with spaces stays one option)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'-D{name}="{escaped}"'


def session_settings(home: Path, master: str = DEFAULT_MASTER) -> dict[str, str]:
    """Spark settings of the embedded runtime, lean for a 2-core machine.

    - Delta Lake as SQL extension and as the session catalog;
    - a Derby-backed Hive metastore and a warehouse under ``home`` so tables outlive the process
      (Hive's session folders there too, not in the temp folder);
    - few shuffle partitions, no UI, no console progress bar;
    - the session time zone and the JVM default time zone are UTC (timestamps are stored zone-less).
    """
    warehouse = home / "warehouse"
    metastore = home / "metastore_db"
    driver_options = " ".join(
        (
            java_option("user.timezone", SESSION_TIME_ZONE),
            java_option("derby.system.home", str(home)),
            java_option("log4j.configurationFile", LOG_CONFIG.as_uri()),
        )
    )
    # Executors may run on other hosts: they get no path of this machine.
    executor_options = java_option("user.timezone", SESSION_TIME_ZONE)
    return {
        "spark.master": master,
        "spark.app.name": "spark_cdc",
        "spark.driver.memory": os.environ.get("SPARK_CDC_DRIVER_MEMORY", "4g"),
        "spark.driver.extraJavaOptions": driver_options,
        "spark.executor.extraJavaOptions": executor_options,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={metastore};create=true"
        ),
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        # Hive's session makes a resources folder per session (ADD FILE / ADD JAR downloads),
        # by default a new one in the JVM's temp folder that nothing removes: one folder under
        # the home instead, reused by every session.
        "spark.hadoop.hive.downloaded.resources.dir": str(home / "hive_resources"),
        "spark.sql.session.timeZone": SESSION_TIME_ZONE,
        # What dbt-spark sets on every target (its credentials' server_side_parameters): casts
        # behave the same whoever created the session (try_cast is used where a cast may fail).
        "spark.sql.ansi.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
        # Broadcast a join side at run time when it turns out small (a delta extract's changes).
        "spark.sql.adaptive.autoBroadcastJoinThreshold": "64m",
        # Hash the smaller side of a shuffled join instead of sorting both when each of its
        # partitions is small (a bounded hash table per task; larger ones are still sorted).
        "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "64m",
        # Cached tables are kept uncompressed: CPU, not memory, is what a small machine lacks
        # (hashes and UUIDs hardly compress; compressing them cost about as much as staging).
        "spark.sql.inMemoryColumnarStorage.compressed": "false",
        # Generated code is compiled once per distinct plan and kept in a cache of 100 classes by
        # default: a stream's micro-batch writes one plan per event type (50 types fill it
        # several times over), and a warm engine sees the same dbt statements again and again.
        # A larger cache lets repeated plans skip the compiler (a steady 240,000-event batch
        # over 50 types: 31-32 s -> 25-28 s).
        "spark.sql.codegen.cache.maxEntries": "2000",
        # Option values shown in plans, the UI and the event log are redacted when their name
        # matches (Spark's default: url): a Kafka source's credentials (kafka.sasl.jaas.config,
        # kafka.ssl.*.password) too.
        "spark.sql.redaction.options.regex": "(?i)url|jaas|password|secret|token|credential",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Delta reconstructs table state with 50 partitions by default: far too many for 2 cores.
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.databricks.delta.schema.autoMerge.enabled": "false",
    }


def uses_embedded_metastore(settings: Mapping[str, str]) -> bool:
    """Whether the settings keep an embedded Derby metastore (one process at a time), not a
    shared one: a metastore service (``hive.metastore.uris``) or a database server, a Derby
    network server (``jdbc:derby://host:port/...``) included."""
    url = settings.get("spark.hadoop.javax.jdo.option.ConnectionURL", "")
    embedded = url.startswith("jdbc:derby:") and not url.startswith("jdbc:derby://")
    return embedded and not settings.get("spark.hadoop.hive.metastore.uris")


def driver_address_settings(master: str) -> dict[str, str]:
    """Where the driver listens: loopback for local masters (the runtime talks to itself only);
    for a cluster, ``$SPARK_CDC_DRIVER_HOST`` (the address executors connect back to) and
    ``$SPARK_CDC_DRIVER_BIND_ADDRESS`` when set, else Spark's own choice."""
    if master.startswith("local"):
        return {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}
    settings = {}
    if os.environ.get("SPARK_CDC_DRIVER_HOST"):
        settings["spark.driver.host"] = os.environ["SPARK_CDC_DRIVER_HOST"]
    if os.environ.get("SPARK_CDC_DRIVER_BIND_ADDRESS"):
        settings["spark.driver.bindAddress"] = os.environ["SPARK_CDC_DRIVER_BIND_ADDRESS"]
    return settings


def python_worker_environment(
    master: str, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment that names the Python workers' interpreter (PySpark reads
    ``PYSPARK_PYTHON`` when its context starts): for a local master, this process's own
    (PySpark's default is whatever ``python3`` comes first on the PATH, which outside an
    activated venv is another interpreter, without the venv's packages or of another version);
    nothing when ``PYSPARK_PYTHON`` is set already, or for a cluster, whose executors run
    elsewhere."""
    found = os.environ if environ is None else environ
    if not master.startswith("local") or found.get("PYSPARK_PYTHON"):
        return {}
    return {"PYSPARK_PYTHON": sys.executable}


def get_or_create_session(
    home: Path | None = None,
    master: str | None = None,
    extra: Mapping[str, Any] | None = None,
):
    """Return the process's SparkSession, creating it with the project's settings if needed."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    silence_query_context_logs()
    if SparkContext._active_spark_context is not None:
        # One session per process: reuse it from any thread (dbt runs nodes in worker threads).
        return SparkSession.builder.getOrCreate()
    # Python-side datetimes (collect, toPandas) are converted in the process time zone: UTC too.
    os.environ["TZ"] = SESSION_TIME_ZONE
    time.tzset()
    home = (home or default_home()).resolve()
    home.mkdir(parents=True, exist_ok=True)
    jars = session_jars()
    settings = session_settings(home, master or os.environ.get("SPARK_CDC_MASTER", DEFAULT_MASTER))
    settings["spark.jars"] = ",".join(str(jar) for jar in jars)
    add_to_driver_options(settings, jars)
    settings.update(driver_address_settings(settings["spark.master"]))
    os.environ.update(python_worker_environment(settings["spark.master"]))
    for key, value in (extra or {}).items():
        settings[str(key)] = str(value)
    if uses_embedded_metastore(settings):
        make_way_for_embedded(home)
        acquire_home(home)
    check_reachable(settings["spark.master"])
    # A local master runs on loopback: said to the JVM only (not to processes started later),
    # so that Spark does not look for, and warn about, another address.
    loopback = settings["spark.master"].startswith("local") and "SPARK_LOCAL_IP" not in os.environ
    if loopback:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.enableHiveSupport().getOrCreate()
    finally:
        if loopback:
            os.environ.pop("SPARK_LOCAL_IP", None)
    try:
        wait_for_executors(session, settings["spark.master"])
    except Exception:
        session.stop()
        raise
    if "SPARK_CDC_LOG_LEVEL" in os.environ:
        session.sparkContext.setLogLevel(os.environ["SPARK_CDC_LOG_LEVEL"])
    return session
