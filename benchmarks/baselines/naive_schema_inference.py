"""Naive baseline of schema drift handling: infer a schema from every payload of each run.

Each run, for each event type present in the run's events: Spark JSON schema inference over all of
that type's payloads in the run (``spark.read.json``), parse them with the inferred schema, flatten
nested objects as the project does, and append to the type's Delta table with schema evolution
(``mergeSchema``). No registry, no variation hashes: every payload is read twice per run (once to
infer, once to parse), whatever its shape.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType


def _flat(struct: StructType, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    out = []
    for field in struct.fields:
        path = (*prefix, field.name)
        if isinstance(field.dataType, StructType):
            out.extend(_flat(field.dataType, path))
        else:
            out.append((path, "__".join(path)))
    return out


def refresh(spark: SparkSession, events: DataFrame, database: str) -> int:
    """Append one run's events (event_type, payload) to per-type tables; returns rows written."""
    events = events.select("event_type", "payload").persist()
    written = 0
    for row in events.select("event_type").distinct().collect():
        payloads = events.where(F.col("event_type") == row.event_type).select("payload")
        schema = spark.read.json(payloads.rdd.map(lambda r: r.payload)).schema
        parsed = payloads.select(F.from_json("payload", schema).alias("p"))
        columns = []
        for path, name in _flat(schema):
            column = F.col("p")
            for part in path:
                column = column.getField(part)
            columns.append(column.alias(name))
        table = f"{database}.naive_{row.event_type}"
        frame = parsed.select(*columns)
        frame.write.format("delta").mode("append").option("mergeSchema", "true").saveAsTable(table)
        written += spark.table(table).count()
    events.unpersist()
    return written
