"""Baseline: the hash-CDC approach of the source article, ported to PySpark as described there.

Stage 1 casts and hashes every row in a Python ``map`` over the RDD (MD5 of the '|'-joined key
values and of the non-key values); the comparison is a full outer join of the hash columns, then
the I, D/X and U/N rows are each rejoined with their payload and written out as Parquet (current
state and a history partition). Kept as it is for comparison only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

CASTS = {"string": str, "bigint": int, "int": int}
SPARK_TYPES = {"string": StringType(), "bigint": LongType(), "int": LongType()}


def _stage(spark: SparkSession, path: Path, keys: dict, nonkeys: dict) -> DataFrame:
    raw = spark.read.option("header", True).csv(str(path))
    names = raw.columns
    key_index = [names.index(k) for k in keys]
    nonkey_index = [names.index(k) for k in nonkeys]
    key_casts = [CASTS[t] for t in keys.values()]
    nonkey_casts = [CASTS[t] for t in nonkeys.values()]

    def cast_and_hash(row):
        key_values = [cast(row[i]) for cast, i in zip(key_casts, key_index, strict=True)]
        nonkey_values = [cast(row[i]) for cast, i in zip(nonkey_casts, nonkey_index, strict=True)]
        key_hash = hashlib.md5("|".join(map(str, key_values)).encode()).hexdigest()
        nonkey_hash = hashlib.md5("|".join(map(str, nonkey_values)).encode()).hexdigest()
        return (key_hash, nonkey_hash, *key_values, *nonkey_values)

    schema = StructType(
        [StructField("keyhash", StringType()), StructField("nonkeyhash", StringType())]
        + [StructField(k, SPARK_TYPES[t]) for k, t in keys.items()]
        + [StructField(k, SPARK_TYPES[t]) for k, t in nonkeys.items()]
    )
    return spark.createDataFrame(raw.rdd.map(cast_and_hash), schema).cache()


def run(
    spark: SparkSession,
    incoming_path: Path,
    current_path: Path | None,
    output_path: Path,
    keys: dict,
    nonkeys: dict,
    effective_date: str,
) -> None:
    """Process one extract: write the new current state and the history partition as Parquet."""
    incoming = _stage(spark, incoming_path, keys, nonkeys)
    payload = ["keyhash", "nonkeyhash", *keys, *nonkeys]
    history = output_path / "history" / f"EFF_START_DATE={effective_date}"
    if current_path is None:
        first = (
            incoming.select(*payload)
            .withColumn("OPERATION", F.lit("I"))
            .withColumn("EFF_START_DATE", F.lit(effective_date))
        )
        first.write.mode("overwrite").parquet(str(output_path / "current"))
        first.write.mode("overwrite").parquet(str(history))
        incoming.unpersist()
        return
    current = spark.read.parquet(str(current_path)).cache()
    current_hashes = current.select(
        F.col("keyhash").alias("c_keyhash"), F.col("nonkeyhash").alias("c_nonkeyhash")
    )
    joined = (
        incoming.select("keyhash", "nonkeyhash")
        .join(current_hashes, F.col("keyhash") == F.col("c_keyhash"), "full_outer")
        .cache()
    )
    target = output_path / "current"
    # Stage 2: inserts
    inserts = joined.where(F.col("c_keyhash").isNull()).select("keyhash")
    inserts = incoming.join(inserts, "keyhash").select(*payload)
    inserts = inserts.withColumn("OPERATION", F.lit("I")).withColumn(
        "EFF_START_DATE", F.lit(effective_date)
    )
    inserts.write.mode("overwrite").parquet(str(target))
    inserts.write.mode("overwrite").parquet(str(history))
    # Stage 3: deletes (full extract)
    deletes = joined.where(F.col("keyhash").isNull()).select(F.col("c_keyhash").alias("keyhash"))
    deletes = current.join(deletes, "keyhash").select(*payload)
    deletes = deletes.withColumn("OPERATION", F.lit("D")).withColumn(
        "EFF_START_DATE", F.lit(effective_date)
    )
    deletes.write.mode("append").parquet(str(target))
    deletes.write.mode("append").parquet(str(history))
    # Stage 4: updates and unchanged rows
    both = joined.where(F.col("keyhash").isNotNull() & F.col("c_keyhash").isNotNull())
    updates = both.where(F.col("nonkeyhash") != F.col("c_nonkeyhash")).select("keyhash")
    updates = incoming.join(updates, "keyhash").select(*payload)
    updates = updates.withColumn("OPERATION", F.lit("U")).withColumn(
        "EFF_START_DATE", F.lit(effective_date)
    )
    updates.write.mode("append").parquet(str(target))
    updates.write.mode("append").parquet(str(history))
    same = both.where(F.col("nonkeyhash") == F.col("c_nonkeyhash")).select("keyhash")
    unchanged = current.join(same, "keyhash").select(*payload, "EFF_START_DATE")
    unchanged = unchanged.withColumn("OPERATION", F.lit("N")).select(
        *payload, "OPERATION", "EFF_START_DATE"
    )
    unchanged.write.mode("append").parquet(str(target))
    for frame in (incoming, current, joined):
        frame.unpersist()
