"""The landed files bronze holds, logged beside it so that a run need not read bronze to know them.

Bronze takes landed files by path (a landed file is immutable). Knowing which files it holds
from its own rows costs a pass over every line it ever took, so a run would read more as the
feed ages. The file log ``<bronze>__landed_files`` holds one row per file of bronze's loads
(load, file, bronze's Delta table id). A run reads the log, and bronze's rows of the loads above
the log's highest (Delta skips the others by ``load_seq``), and logs those loads' files.

The log is written only for loads bronze has committed, so it never names a file bronze does
not hold (a run killed after logging and before its own bronze append leaves it true); two
overlapping runs that log the same loads write them once (Delta's idempotent writes, by the
highest load logged); and rows of another bronze table id (bronze dropped and built again) are
ignored. Streaming micro-batches write bronze without the log: the next dbt run logs their loads.
"""

from __future__ import annotations

import json

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from spark_cdc.core.idempotent_loads import TXN_APP_ID, TXN_VERSION, USER_METADATA
from spark_cdc.core.orphan_tables import has_orphan

LOG_SUFFIX = "__landed_files"
LOG_SCHEMA = StructType(
    [
        StructField("load_seq", LongType(), False),
        StructField("source_file", StringType(), False),
        StructField("bronze_id", StringType(), False),
    ]
)


def log_table(bronze_table: str) -> str:
    """The file log's name: bronze's, with a suffix."""
    return f"{bronze_table}{LOG_SUFFIX}"


def _table_id(spark: SparkSession, table: str) -> str:
    return str(spark.sql(f"describe detail {table}").select("id").first()[0])


def taken_files(spark: SparkSession, bronze_table: str) -> list[str]:
    """Every file bronze holds (its ``source_file`` values); logs the files of its loads that
    the log does not hold yet."""
    bronze_id = _table_id(spark, bronze_table)
    log = log_table(bronze_table)
    logged = None
    if spark.catalog.tableExists(log):
        logged = spark.table(log).where(F.col("bronze_id") == bronze_id)
    through = None if logged is None else logged.agg(F.max("load_seq")).first()[0]
    bronze = spark.table(bronze_table)
    newer = bronze if through is None else bronze.where(F.col("load_seq") > F.lit(through))
    fresh = newer.select("load_seq", "source_file").distinct().collect()
    if fresh:
        _log(spark, log, [(r.load_seq, r.source_file, bronze_id) for r in fresh])
    files = {row.source_file for row in fresh}
    if logged is not None:
        files.update(row.source_file for row in logged.select("source_file").distinct().collect())
    return sorted(files)


def _log(spark: SparkSession, log: str, rows: list[tuple[int, str, str]]) -> None:
    """Append ``rows`` to the log once: a write naming the highest load it logs, which Delta
    skips when a write of the same or a higher load committed first. The session's load claim
    for bronze (spark_cdc.core.idempotent_loads) is set aside meanwhile: it is bronze's alone."""
    highest = max(row[0] for row in rows)
    claim = {key: spark.conf.get(key, None) for key in (TXN_APP_ID, TXN_VERSION, USER_METADATA)}
    for key in claim:
        spark.conf.unset(key)
    try:
        # Created apart from the append: two runs' first appends would both create it, and
        # one would fail; appends to an existing table never conflict.
        if has_orphan(spark, log):
            # Left without its catalog entry by a killed run: replaced (Delta takes a table
            # written over an orphan, not a bare CREATE there). The log is derived from bronze,
            # whose loads the next lines log again.
            spark.createDataFrame([], LOG_SCHEMA).writeTo(log).using("delta").createOrReplace()
        spark.sql(
            f"create table if not exists {log} "
            "(load_seq bigint not null, source_file string not null, bronze_id string not null)"
            " using delta"
        )
        (
            spark.createDataFrame(rows, LOG_SCHEMA)
            .write.format("delta")
            .mode("append")
            .option("txnAppId", f"spark_cdc.landed_files:{log.replace('`', '').lower()}")
            .option("txnVersion", highest)
            .option("userMetadata", json.dumps({"spark_cdc_logged_through_load": highest}))
            .saveAsTable(log)
        )
    finally:
        for key, value in claim.items():
            if value is not None:
                spark.conf.set(key, value)
