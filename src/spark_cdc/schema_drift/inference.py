"""Spark types of JSON prototypes, and the widening rules that merge them into superset schemas.

Types of one decoded JSON value (:func:`infer_type`): null → NullType, boolean → BooleanType,
an integer within 64 bits → LongType (bigint), any other number → DoubleType, a string →
StringType, an object → StructType (fields sorted by name), an array → ArrayType of its elements'
merged type.

Merging two types of one attribute (:func:`merge_types`, also used for array elements):

- null merges into anything; equal types stay;
- scalars widen along bigint → double → string; a boolean with a number or a string widens to
  string (a string column keeps numbers and booleans as their JSON text);
- objects merge attribute by attribute (the union of attributes), arrays merge their elements;
- an object or array against a scalar, or an object against an array, cannot be merged: a
  :class:`TypeConflict` naming the attribute path.

A superset must also give distinct silver columns: two attributes of one object whose names are
equal ignoring case, or two flattened columns whose names are equal ignoring case, are a
conflict too. :func:`evolve` adds prototypes to a superset one by one in a given order; a
prototype that conflicts is left out (its variation is quarantined) and does not change it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    NullType,
    StringType,
    StructField,
    StructType,
)

from spark_cdc.schema_drift.variation import INT64_MAX, INT64_MIN

FLAT_SEPARATOR = "__"
# Deepest nesting of objects and arrays a prototype may have: deeper payloads are conflicts
# (``too_deep``) rather than supersets that Spark's schema parser and every silver reader would
# have to walk level by level.
MAX_NESTING_DEPTH = 32
_WIDENING = (LongType(), DoubleType(), StringType())
_SCALARS = (BooleanType(), LongType(), DoubleType(), StringType())


class TypeConflict(ValueError):
    """Two types of one attribute that no widening rule merges."""

    def __init__(self, path: str, existing: DataType, new: DataType) -> None:
        super().__init__(f"type_conflict:{path}:{existing.simpleString()}->{new.simpleString()}")
        self.path = path


class TooDeep(ValueError):
    """A prototype nested deeper than the registry accepts."""

    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"too_deep:{depth}>{limit}")


class InvalidName(ValueError):
    """An attribute name no silver column can have (the empty name)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"invalid_name:{path}")


def nesting_depth(text: str) -> int:
    """Deepest nesting of objects and arrays in a JSON text (0 for a scalar), counted without
    recursion so that any depth can be measured."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
    return deepest


class NameCollision(ValueError):
    """Two attributes that would give the same silver column (names equal ignoring case)."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"name_collision:{first}:{second}")


def infer_type(value: Any) -> DataType:
    """The Spark type of one decoded JSON value (see the module docstring)."""
    if value is None:
        return NullType()
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        return LongType() if INT64_MIN <= value <= INT64_MAX else DoubleType()
    if isinstance(value, float):
        return DoubleType()
    if isinstance(value, str):
        return StringType()
    if isinstance(value, dict):
        return StructType(
            [StructField(key, infer_type(item), True) for key, item in sorted(value.items())]
        )
    if isinstance(value, list):
        element: DataType = NullType()
        for position, item in enumerate(value):
            element = merge_types(element, infer_type(item), f"[{position}]")
        return ArrayType(element, True)
    raise TypeError(f"not a JSON value: {value!r}")


def _widen_scalars(left: DataType, right: DataType) -> DataType:
    if left in _WIDENING and right in _WIDENING:
        return max(left, right, key=_WIDENING.index)
    return StringType()


def merge_types(left: DataType, right: DataType, path: str = "$") -> DataType:
    """Merge two types of the attribute at ``path`` (raises :class:`TypeConflict`)."""
    if isinstance(left, NullType):
        return right
    if isinstance(right, NullType) or left == right:
        return left
    if left in _SCALARS and right in _SCALARS:
        return _widen_scalars(left, right)
    if isinstance(left, StructType) and isinstance(right, StructType):
        return _merge_structs(left, right, path)
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        return ArrayType(merge_types(left.elementType, right.elementType, f"{path}[]"), True)
    raise TypeConflict(path, left, right)


def _merge_structs(left: StructType, right: StructType, path: str) -> StructType:
    fields = {item.name: item.dataType for item in left.fields}
    for item in right.fields:
        child = f"{path}.{item.name}"
        fields[item.name] = (
            merge_types(fields[item.name], item.dataType, child)
            if item.name in fields
            else item.dataType
        )
    _check_names(fields, path)
    return StructType([StructField(name, kind, True) for name, kind in sorted(fields.items())])


def _check_names(names: Iterable[str], path: str) -> None:
    seen: dict[str, str] = {}
    for name in names:
        folded = name.lower()
        if folded in seen:
            raise NameCollision(f"{path}.{seen[folded]}", f"{path}.{name}")
        seen[folded] = name


def finalize(kind: DataType) -> DataType | None:
    """The storable type: attributes only ever seen as null (or as empty arrays) are left out."""
    if isinstance(kind, NullType):
        return None
    if isinstance(kind, ArrayType):
        element = finalize(kind.elementType)
        return None if element is None else ArrayType(element, True)
    if isinstance(kind, StructType):
        fields = [
            StructField(item.name, final, True)
            for item in kind.fields
            if (final := finalize(item.dataType)) is not None
        ]
        return StructType(fields) if fields else None
    return kind


@dataclass(frozen=True)
class FlatColumn:
    """One silver column: its name, the attribute path it comes from and its type."""

    name: str
    path: tuple[str, ...]
    data_type: DataType


def flatten(schema: StructType, reserved: Sequence[str] = ()) -> list[FlatColumn]:
    """Silver columns of a superset: nested objects flattened with ``__``, arrays kept whole.

    Raises :class:`NameCollision` when two columns (or a column and a ``reserved`` name) are
    equal ignoring case, :class:`InvalidName` for an empty (or blank) attribute name.
    """
    columns: list[FlatColumn] = []

    def walk(struct: StructType, prefix: tuple[str, ...]) -> None:
        for item in struct.fields:
            path = (*prefix, item.name)
            if not item.name.strip():
                raise InvalidName("$." + ".".join(path))
            if isinstance(item.dataType, StructType):
                walk(item.dataType, path)
            else:
                columns.append(FlatColumn(FLAT_SEPARATOR.join(path), path, item.dataType))

    walk(schema, ())
    _check_names([*reserved, *(column.name for column in columns)], "$")
    return columns


@dataclass
class Evolution:
    """Outcome of adding prototypes to a superset: the new superset, what joined, what conflicts."""

    superset: StructType
    accepted: list[str] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)


def evolve(
    superset: StructType | None,
    prototypes: Sequence[tuple[str, str]],
    reserved: Sequence[str] = (),
    max_depth: int = MAX_NESTING_DEPTH,
) -> Evolution:
    """Add ``(variation key, prototype JSON text)`` pairs to ``superset`` in the given order."""
    outcome = Evolution(superset or StructType([]))
    for key, text in prototypes:
        try:
            depth = nesting_depth(text)
            if depth > max_depth:
                raise TooDeep(depth, max_depth)
            candidate = merge_types(outcome.superset, infer_type(json.loads(text)))
            final = finalize(candidate)
            flatten(final if isinstance(final, StructType) else StructType([]), reserved)
        except (TypeConflict, NameCollision, InvalidName, TooDeep) as conflict:
            outcome.conflicts[key] = str(conflict)
            continue
        outcome.superset = candidate
        outcome.accepted.append(key)
    return outcome


def schema_from_json(text: str | None) -> StructType | None:
    """A superset schema from its JSON serialization (None for None)."""
    return None if text is None else StructType.fromJson(json.loads(text))
