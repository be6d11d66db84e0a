"""A feed of events ordered by columns of its own: a source's ``sequence_by`` (AUTO CDC's
``sequence_by`` struct of columns), e.g. a file number, an offset and a row number.

Their values, in the order listed, become the event's ``event_position``, the mechanism a
Debezium connector family's position uses: compared part by part, before ``event_ts`` and
``event_seq``. Each part is taken as an exact 64-bit integer: an integral column as it is, a
decimal without places, a text holding an integer, a date as its days and a timestamp as its
microseconds since 1970-01-01. An event whose part is NULL or not such an integer (a text
``'7a'``, a number beyond 2^63-1) is quarantined as ``invalid_sequence:<column>``; a column of
another type, or a feed that has an ``event_position`` of its own, is a configuration error.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    DateType,
    DecimalType,
    IntegralType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from spark_cdc.change_events.model import ChangeEventConfigError
from spark_cdc.change_events.normalize import LANDING_ERROR, POSITION

_INTEGER = r"^\s*-?[0-9]+\s*$"


def _exact_long(value: Column, kind: DataType) -> Column | None:
    """``value`` as the bigint it is exactly (null when it is none), None for a type that holds
    no integer order."""
    if isinstance(kind, IntegralType):
        return value.cast("bigint")
    if isinstance(kind, DecimalType) and kind.scale == 0:
        return value.try_cast("bigint")
    if isinstance(kind, StringType):
        return F.when(value.rlike(_INTEGER), F.trim(value).try_cast("bigint"))
    if isinstance(kind, DateType):
        return F.unix_date(value).cast("bigint")
    if isinstance(kind, TimestampType | TimestampNTZType):
        return F.unix_micros(value.cast("timestamp"))
    return None


def with_sequence(feed: DataFrame, columns: Sequence[str]) -> DataFrame:
    """``feed`` with ``event_position`` made of ``columns`` (see the module doc); an event whose
    part is not an exact integer gets ``invalid_sequence:<column>`` as its landing error
    (unless it has one already)."""
    if POSITION in feed.columns:
        raise ChangeEventConfigError(
            "sequence_by: the feed has an event_position of its own (a Debezium source's)"
        )
    types = {field.name: field.dataType for field in feed.schema.fields}
    parts, errors = [], []
    for name in columns:
        if name not in types:
            raise ChangeEventConfigError(f"sequence_by names {name!r}, not a column of the feed")
        part = _exact_long(F.col(name), types[name])
        if part is None:
            raise ChangeEventConfigError(
                f"sequence_by column {name!r} is {types[name].simpleString()}: an integral, "
                "a decimal without places, a date, a timestamp or an integer text orders"
            )
        parts.append(part)
        errors.append(F.when(part.isNull(), F.lit(f"invalid_sequence:{name}")))
    error = F.coalesce(*errors)
    earlier = F.col(LANDING_ERROR) if LANDING_ERROR in feed.columns else F.lit(None)
    return feed.withColumn(POSITION, F.when(error.isNull(), F.array(*parts))).withColumn(
        LANDING_ERROR, F.coalesce(earlier.cast("string"), error)
    )
