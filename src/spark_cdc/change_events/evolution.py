"""Columns of a change-event source that are not declared: discovered by the registry's rules.

With ``evolve_columns: true`` a source's target grows with the columns its images bring. The
column set of an image is a variation (as a JSON payload's attribute set is, see
spark_cdc.schema_drift): the distinct sorted column-name sets of the valid insert and update
events are taken in order of their first batch (then by name), and each is added to the
superset of the declared columns with :func:`spark_cdc.schema_drift.inference.evolve`:

- a new name becomes a target column of type ``string`` (the values are text as delivered: the
  widest type of the widening chain, so a discovered column never changes type between runs and
  an incremental run equals a full rebuild; declare a column to type it), unless the source
  types its columns itself (``column_types``: a Debezium source's envelope schema,
  change_events.debezium.evolved_types): then the column takes the type the events of the first
  batch that brings it give it (of several, the least by name), once and for all; a later
  event that gives it another type is quarantined with
  ``undecodable:<name>:<its type> into <the column's type>`` (a text column takes any);
- a column set holding a name equal ignoring case to an earlier column (or to a column of the
  history table) conflicts: its events are quarantined with ``name_collision:$.<a>:$.<b>``;
- a column set holding a new name that a Delta column cannot have (a space or one of
  ``,;{}()=``, a tab or a newline) is quarantined with ``invalid_name:$.<name>`` (checked
  first; dots, dashes and other Unicode are kept).

Names the source excludes (``except_columns``, AUTO CDC's ``except_column_list``; compared
ignoring case) are left out of every column set: never discovered, never a collision.

Declared columns keep their declared types. The ledger keeps the images of the declared columns;
the discovered columns are read from the raw names and values when versions are resolved.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import COLUMN_TYPES, REASON, _text, cast_text
from spark_cdc.change_events.resolve import VERSION_COLUMNS
from spark_cdc.hash_cdc.config import DELTA_FORBIDDEN
from spark_cdc.schema_drift.inference import evolve

BATCH = "_batch_id"
RESERVED = (
    *VERSION_COLUMNS,
    "event_position",
    "updated_at",
    "last_change_type",
    "row_hash",
    "_is_deleted",
)
DISCOVERED_TYPE = "string"


@dataclass(frozen=True)
class Discovery:
    """Discovered columns (in order), the column sets that conflict (sorted names → reason) and
    the discovered columns' types (text when absent)."""

    columns: tuple[str, ...]
    conflicts: dict[tuple[str, ...], str]
    types: Mapping[str, str] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()

    def type_of(self, column: str) -> str:
        return self.types.get(column, DISCOVERED_TYPE)


def image_names(excluded: Sequence[str] = ()) -> Column:
    """An event's image column names without the ``excluded`` ones (ignoring case)."""
    if not excluded:
        return F.col("column_names")
    lowered = [name.lower() for name in excluded]
    return F.filter("column_names", lambda name: ~F.lower(name).isin(*lowered))


def column_types(events: DataFrame, excluded: Sequence[str] = ()) -> dict[str, str]:
    """Per image column name of the valid inserts and updates (but the ``excluded``), the type
    the source gives it in the first batch that brings it (the least by name of that batch's;
    text where it gives none); empty for events without ``column_types``."""
    if COLUMN_TYPES not in events.columns:
        return {}
    valid = events.where(F.col(REASON).isNull() & F.col(COLUMN_TYPES).isNotNull() & _reads_image())
    pairs = valid.select(
        BATCH, F.explode(F.arrays_zip("column_names", COLUMN_TYPES)).alias("p")
    ).select(
        BATCH,
        F.col("p.column_names").alias("name"),
        F.coalesce(F.col(f"p.{COLUMN_TYPES}"), F.lit(DISCOVERED_TYPE)).alias("type"),
    )
    lowered = {name.lower() for name in excluded}
    rows = pairs.groupBy("name").agg(F.min_by("type", F.struct(BATCH, "type")).alias("type"))
    return {row.name: row.type for row in rows.collect() if row.name.lower() not in lowered}


def column_sets(
    events: DataFrame, excluded: Sequence[str] = ()
) -> list[tuple[int, tuple[str, ...]]]:
    """(first batch, sorted column names but the ``excluded``) of the image column sets of
    valid inserts and updates (a delete's image is never read)."""
    valid = events.where(
        F.col(REASON).isNull() & F.col("column_names").isNotNull() & _reads_image()
    )
    rows = (
        valid.groupBy(F.array_sort(image_names(excluded)).alias("names"))
        .agg(F.min(BATCH).alias("first"))
        .collect()
    )
    return sorted((row.first, tuple(row.names)) for row in rows)


def _unstorable(schema: TargetSchema, names: Sequence[str]) -> str | None:
    """The first new name of a column set that a Delta table cannot hold (one of
    :data:`DELTA_FORBIDDEN` in it), if any."""
    for name in names:
        if name not in schema.columns and set(name) & set(DELTA_FORBIDDEN):
            return name
    return None


def discover(
    schema: TargetSchema,
    sets: Sequence[tuple[int, tuple[str, ...]]],
    types: Mapping[str, str] | None = None,
    excluded: Sequence[str] = (),
) -> Discovery:
    """Apply the registry's rules to the column sets, in the given order; ``types``: the
    source's own types of the names (column_types); ``excluded``: the names the sets were
    taken without (column_sets), kept for conflict_reason."""
    unstorable = {
        names: f"invalid_name:$.{name}"
        for _, names in sets
        if (name := _unstorable(schema, names)) is not None
    }
    sets = [(first, names) for first, names in sets if names not in unstorable]
    declared = StructType([StructField(name, StringType()) for name in schema.columns])
    prototypes = [(json.dumps(names), json.dumps(dict.fromkeys(names, ""))) for _, names in sets]
    outcome = evolve(declared, prototypes, RESERVED)
    columns = tuple(
        field.name for field in outcome.superset.fields if field.name not in schema.columns
    )
    conflicts = {tuple(json.loads(key)): reason for key, reason in outcome.conflicts.items()}
    conflicts.update(unstorable)
    # evolve sorts a superset's fields by name: keep the order in which columns appeared.
    first_seen: dict[str, int] = {}
    for position, (_, names) in enumerate(sets):
        if tuple(names) in conflicts:
            continue
        for name in names:
            first_seen.setdefault(name, position)
    columns = tuple(sorted(columns, key=lambda name: (first_seen[name], name)))
    given = types or {}
    types_of = {c: given[c] for c in columns if c in given}
    return Discovery(columns, conflicts, types_of, tuple(excluded))


def columns_in(schema: TargetSchema, table: StructType) -> TargetSchema:
    """The target schema of a table written with ``schema`` after discovery: its declared
    columns, then (in the table's order, with the table's types) the columns of ``table`` that
    are neither declared (ignoring case) nor a version's bookkeeping column."""
    declared = {name.lower() for name in schema.columns}
    bookkeeping = {name.lower() for name in RESERVED}
    discovered = {
        f.name: f.dataType.simpleString()
        for f in table.fields
        if f.name.lower() not in declared and f.name.lower() not in bookkeeping
    }
    return schema.with_columns(discovered)


def evolved_schema(schema: TargetSchema, discovery: Discovery) -> TargetSchema:
    """The target schema with the discovered columns (typed, else as text) after the declared
    ones."""
    return schema.with_columns({c: discovery.type_of(c) for c in discovery.columns})


def conflict_reason(discovery: Discovery, typed: bool = False) -> Column:
    """The quarantine reason of an event whose column set conflicts, or (``typed``: events
    with ``column_types``) that gives a typed discovered column another type (null
    otherwise)."""
    reason: Column = F.lit(None).cast("string")
    names = F.array_sort(image_names(discovery.excluded))
    for conflict, text in discovery.conflicts.items():
        reason = F.when(names == F.array(*map(F.lit, conflict)), F.lit(text)).otherwise(reason)
    if typed:
        mismatches = []
        for column, kind in discovery.types.items():
            if kind == DISCOVERED_TYPE:
                continue
            given = F.coalesce(_text("column_names", COLUMN_TYPES, column), F.lit("no schema"))
            present = F.array_contains("column_names", column)
            mismatches.append(
                F.when(
                    present & (given != kind),
                    F.concat(F.lit(f"undecodable:{column}:"), given, F.lit(f" into {kind}")),
                )
            )
        if mismatches:
            reason = F.coalesce(reason, *mismatches)
    return F.when(_reads_image(), reason)


def _reads_image() -> Column:
    """Whether an event's image is read: inserts and updates (a delete's is ignored)."""
    return F.col("change_kind").isin("insert", "update")


def with_discovered_images(
    events: DataFrame, declared: TargetSchema, columns: Sequence[str], schema: TargetSchema
):
    """Events whose image also holds the discovered ``columns`` (first occurrence), cast to
    their types in ``schema`` (the evolved schema)."""
    if not columns:
        return events
    image = F.when(
        F.col("image").isNotNull(),
        F.struct(
            *(F.col("image").getField(name).alias(name) for name in declared.columns),
            *(
                cast_text(_text("column_names", "column_values", name), schema.columns[name]).alias(
                    name
                )
                for name in columns
            ),
        ),
    )
    return events.withColumn("image", image)


def add_missing_columns(spark, table: str, schema: TargetSchema) -> list[str]:
    """Add to ``table`` the target columns it lacks (discovered since it was written)."""
    present = {name.lower() for name in spark.table(table).columns}
    missing = [(c, t) for c, t in schema.columns.items() if c.lower() not in present]
    if missing:
        columns = ", ".join(f"`{c}` {t}" for c, t in missing)
        spark.sql(f"alter table {table} add columns ({columns})")
    return [c for c, _ in missing]
