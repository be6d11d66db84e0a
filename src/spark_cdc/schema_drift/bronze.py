"""Bronze: every landed JSON line once, as delivered, with its event type and variation hash.

A run takes the landed files it has not taken yet (by path: a landed file is immutable; land
new data as new files) as one new *load* (``load_seq`` = the highest so far + 1). Each line is
kept, whatever it holds; a line that cannot be registered has its ``parse_error``
(:mod:`spark_cdc.schema_drift.variation`: malformed_json, not_an_object, missing_event_type)
and no variation hash.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_cdc.schema_drift.variation import (
    event_type_of,
    parse_error,
    parsed_payload,
    variation_hash,
)

BRONZE_COLUMNS = (
    "load_seq",
    "load_id",
    "ingested_at",
    "source_file",
    "batch_id",
    "file_modified_at",
    "payload",
    "event_type",
    "variation_hash",
    "parse_error",
    "has_parse_error",
)


def bronze_increment(
    raw: DataFrame,
    existing: DataFrame | None,
    load_id: str | None,
    folders: Sequence[str] | None = None,
    taken_files: Sequence[str] | None = None,
) -> DataFrame:
    """The new load: lines of files not in ``existing`` (raw: payload, source_file, batch_id,
    file_modified_at), with their event type, variation hash and parse error.

    ``taken_files``: every file ``existing`` holds, when the caller knows them
    (:mod:`spark_cdc.schema_drift.landed_files`): raw lines are kept by a filter on their file's
    path, which Spark applies to the file listing (``_metadata.file_path``), so the files taken
    before are not read at all. ``folders``: the batch ids of every raw line, when the caller
    knows them (a micro-batch): a file's batch id follows from its path, so only bronze rows of
    those batches can name the same files, and data skipping leaves the others unread."""
    load_seq = 1
    if existing is not None:
        if taken_files is not None:
            raw = raw.where(~F.col("source_file").isin(*taken_files)) if taken_files else raw
        else:
            taken = (
                existing if folders is None else existing.where(F.col("batch_id").isin(*folders))
            )
            files = taken.select("source_file").distinct()
            raw = raw.join(F.broadcast(files), "source_file", "left_anti")
        load_seq = (existing.agg(F.max("load_seq")).first()[0] or 0) + 1
    parsed = raw.withColumn("_parsed", parsed_payload(F.col("payload")))
    error = parse_error(F.col("payload"), F.col("_parsed"))
    return parsed.withColumn("parse_error", error).select(
        F.lit(load_seq).cast("long").alias("load_seq"),
        F.lit(load_id).cast("string").alias("load_id"),
        F.localtimestamp().alias("ingested_at"),
        "source_file",
        "batch_id",
        "file_modified_at",
        "payload",
        F.trim(event_type_of(F.col("_parsed"))).alias("event_type"),
        F.when(F.col("parse_error").isNull(), variation_hash(F.col("_parsed"))).alias(
            "variation_hash"
        ),
        "parse_error",
        F.col("parse_error").isNotNull().alias("has_parse_error"),
    )
