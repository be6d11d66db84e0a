"""Baseline: a PySpark port of the change-event resolver of the source article (Scala there).

Kept as the article describes it, for the benchmark only:

- change events are split into columns by position (COLUMN_NAMES.zipWithIndex);
- existing rows and inserts are unioned (unionWithSchema), old_<key> = <key>;
- updates and deletes get old_<key> from oldKeyValues, for each distinct oldKeyNames;
- applyChangeEventsByTimestamp: keep the latest row per old_<key> (row_number over a window
  ordered by timestamp desc), then set old_<key> = <key> for updates, and repeat until a pass
  removes no row — two counts per pass;
- drop deletes, the old_<key> columns and changeType, then distinct().

Known limits (the benchmark counts the keys where its table differs from the project's): ties on
timestamp are broken arbitrarily (no sequence), a later event on a key hides an earlier update
that moved the row away from that key (the moved row is lost), a key-change chain leaves a row
at every key it passed through (A->B->C->D on a row A gives rows B, C and D: a pass re-keys every
update at once, so it stops after a few passes), created_at is not tracked, and each pass
recomputes the growing plan.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType


def union_with_schema(*frames: DataFrame) -> DataFrame:
    """Union frames whose columns differ: missing columns are null, columns sorted by name."""
    spark = frames[0].sparkSession
    schemas = []
    for frame in frames:
        if frame.schema.fields not in schemas:
            schemas.append(frame.schema.fields)
    if len(schemas) == 1:
        return reduce(DataFrame.union, frames)
    fields, seen = [], set()
    for field in sorted((f for s in schemas for f in s), key=lambda f: f.name):
        if (field.name, field.dataType) not in seen:
            seen.add((field.name, field.dataType))
            fields.append(field)
    empty = spark.createDataFrame([], StructType(fields))
    ordered = [F.col(f.name) for f in fields]

    def add(left: DataFrame, right: DataFrame) -> DataFrame:
        for field in fields:
            if field not in right.schema.fields:
                right = right.withColumn(field.name, F.lit(None).cast(field.dataType))
        return left.union(right.select(*ordered))

    return reduce(add, frames, empty)


def apply_change_events_by_timestamp(frame: DataFrame, keys: list[str]) -> DataFrame:
    """Latest row per old key, re-keying updates, until a pass removes nothing."""
    partition = [F.col(f"old_{k}") for k in keys] if keys else [F.col(c) for c in frame.columns]
    window = Window.partitionBy(*partition).orderBy(F.desc("timestamp"))
    current, iteration, done = frame, 0, False
    while not done:
        before = current
        if iteration > 0:
            for key in keys:
                before = before.withColumn(
                    f"old_{key}",
                    F.when(F.col("changeType") == "update", F.col(key)).otherwise(
                        F.col(f"old_{key}")
                    ),
                )
        after = (
            before.withColumn("rank", F.row_number().over(window))
            .where(F.col("rank") == 1)
            .drop("rank")
        )
        done = after.count() == before.count()
        current, iteration = after, iteration + 1
    return current


def resolve(datalake: DataFrame, change_events: DataFrame, column_names: list[str]) -> DataFrame:
    """The article's resolution of ``change_events`` against ``datalake`` (data + timestamp)."""
    split = reduce(
        lambda df, indexed: df.withColumn(indexed[1], F.col("columnValues")[indexed[0]]),
        enumerate(column_names),
        change_events,
    ).drop("columnNames", "columnValues")
    inserts = split.where(F.col("changeType") == "insert").drop("oldKeyNames", "oldKeyValues")
    datalake_and_inserts = union_with_schema(inserts, datalake)
    updates_deletes = split.where(F.col("changeType").isin("update", "delete"))
    key_sets = [
        row[0] for row in updates_deletes.select("oldKeyNames").distinct().collect() if row[0]
    ]
    resolved = datalake_and_inserts
    for keys in key_sets:
        with_old = reduce(lambda df, k: df.withColumn(f"old_{k}", F.col(k)), keys, resolved)
        old_keys = reduce(
            lambda df, indexed: df.withColumn(
                f"old_{indexed[1]}", F.col("oldKeyValues")[indexed[0]]
            ),
            enumerate(keys),
            updates_deletes,
        )
        old_keys = old_keys.where(F.col("oldKeyNames") == F.array(*map(F.lit, keys))).drop(
            "oldKeyNames", "oldKeyValues"
        )
        initial = union_with_schema(with_old, old_keys).cache()
        applied = apply_change_events_by_timestamp(initial, list(keys))
        resolved = applied.where(
            (F.col("changeType") != "delete") | F.col("changeType").isNull()
        ).drop(*(f"old_{k}" for k in keys))
    return resolved.drop("changeType").distinct()
