"""The type of a column a Debezium source discovers (``evolve_columns``), from the envelope's
schema entry of the message that brings it.

An evolved attribute is decoded into its exact text (the types table's ``string`` column); its
column takes the type that text casts into exactly, by the entry's logical name, else its
Connect type:

- ``Decimal`` with its ``connect.decimal.precision`` (at most 38) -> ``decimal(p,s)``;
- ``Date``, ``IsoDate`` -> ``date``; ``Timestamp``, ``MicroTimestamp``, ``NanoTimestamp``,
  ``IsoTimestamp`` -> ``timestamp``;
- a plain int8, int16, int32, int64 (``io.debezium.time.Year`` too) -> tinyint, smallint, int,
  bigint; float32, float64 -> float, double; boolean -> boolean; bytes -> binary;
- anything else -> ``string``: a decimal without a precision or of more than 38 digits,
  ``VariableScaleDecimal``, ``ZonedTimestamp`` (its offset as sent), times (MySQL's go beyond a
  day), ``Bits`` (its binary digits), JSON, enums, UUIDs, arrays and structs;
- no schema entry (schemas off) -> none: ``string``, unless an earlier message typed it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_cdc.change_events.debezium.types import FieldSchema

DECIMAL = "org.apache.kafka.connect.data.Decimal"
PRECISION = "connect.decimal.precision"
MAX_PRECISION = 38
BY_NAME = {
    "io.debezium.time.Date": "date",
    "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.IsoDate": "date",
    "io.debezium.time.Timestamp": "timestamp",
    "org.apache.kafka.connect.data.Timestamp": "timestamp",
    "io.debezium.time.MicroTimestamp": "timestamp",
    "io.debezium.time.NanoTimestamp": "timestamp",
    "io.debezium.time.IsoTimestamp": "timestamp",
    "io.debezium.time.Year": "int",
}
BY_TYPE = {
    "int8": "tinyint",
    "int16": "smallint",
    "int32": "int",
    "int64": "bigint",
    "float32": "float",
    "float64": "double",
    "boolean": "boolean",
    "bytes": "binary",
}
TEXT = "string"


def _decimal_type(parameters: Mapping[str, str]) -> str:
    precision, scale = parameters.get(PRECISION, ""), parameters.get("scale", "")
    if not (precision.isdigit() and scale.isdigit()):
        return TEXT
    p, s = int(precision), int(scale)
    return f"decimal({p},{s})" if 0 < p <= MAX_PRECISION and s <= p else TEXT


def evolved_type(field: FieldSchema | None) -> str | None:
    """The Spark type of an evolved column whose message's schema entry is ``field`` (None: no
    entry)."""
    if field is None or (field.type is None and field.name is None):
        return None
    if field.name == DECIMAL:
        return _decimal_type(field.parameters or {})
    if field.name is not None:
        return BY_NAME.get(field.name, TEXT)
    return BY_TYPE.get(field.type or "", TEXT)


def evolved_type_column(field: Column) -> Column:
    """evolved_type in Spark, of a schema entry struct (type, name, parameters) or null."""
    parameters = field["parameters"]
    precision = parameters[PRECISION]
    scale = parameters["scale"]
    digits = precision.rlike("^[0-9]+$") & scale.rlike("^[0-9]+$")
    p, s = precision.try_cast("int"), scale.try_cast("int")
    fits = digits & (p > 0) & (p <= MAX_PRECISION) & (s <= p)
    decimal = F.when(fits, F.format_string("decimal(%d,%d)", p, s)).otherwise(F.lit(TEXT))
    by_name = F.coalesce(F.element_at(F.create_map(*_pairs(BY_NAME)), field["name"]), F.lit(TEXT))
    by_type = F.coalesce(F.element_at(F.create_map(*_pairs(BY_TYPE)), field["type"]), F.lit(TEXT))
    absent = field.isNull() | (field["type"].isNull() & field["name"].isNull())
    return (
        F.when(absent, F.lit(None).cast("string"))
        .when(field["name"] == DECIMAL, decimal)
        .when(field["name"].isNotNull(), by_name)
        .otherwise(by_type)
    )


def _pairs(mapping: Mapping[str, str]) -> list[Column]:
    return [F.lit(part) for item in mapping.items() for part in item]
