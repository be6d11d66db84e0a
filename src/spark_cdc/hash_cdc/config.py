"""Configuration of one hash-CDC dataset (declared in YAML, under the staging model's meta)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_cdc.core.type_text import type_text_problem

EXTRACT_MODES = ("full", "delta")
EXTRACT_FORMATS = ("csv", "parquet")
# Characters a Delta column name cannot hold (without column mapping).
DELTA_FORBIDDEN = " ,;{}()\n\t="
# A full extract may delete at most this share of the keys live before it, unless allowed.
DEFAULT_MAX_DELETE_FRACTION = 0.5
# The operation column's values that mark a row as a delete, unless declared.
DEFAULT_DELETE_VALUES = ("D",)
DEFAULT_UPSERT_VALUES = ("I", "U")


class ConfigError(ValueError):
    """A dataset configuration that cannot be used."""


@dataclass(frozen=True)
class DatasetConfig:
    """Columns and their target Spark types, by role.

    - ``keys``: the business key (hashed into ``key_hash``);
    - ``nonkeys``: tracked attributes (hashed into ``nonkey_hash``);
    - ``sensitive``: tracked attributes kept out of the current/history tables, in a separate
      table joined by ``key_hash``;
    - ``excluded``: operational columns carried along but never part of change detection;
    - ``mode``: ``full`` (a missing key is deleted, D) or ``delta`` (a missing key is X);
    - ``file_format``: ``csv`` or ``parquet``;
    - ``max_delete_fraction``: the share of live keys a full extract may delete (the mass-delete
      guard, see guards);
    - ``operation_column`` (delta mode only): the extract's column that says what each row is,
      a delete when its value (trimmed, any case) is one of ``delete_values``, an insert or
      update when it is one of ``upsert_values``; any other value is quarantined
      (``unknown_operation:<column>``); with it a key a delta extract lacks stays as it is
      (without it: X). The column is read, never stored.
    """

    name: str
    keys: dict[str, str]
    nonkeys: dict[str, str]
    sensitive: dict[str, str] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)
    mode: str = "full"
    file_format: str = "csv"
    max_delete_fraction: float = DEFAULT_MAX_DELETE_FRACTION
    operation_column: str | None = None
    delete_values: tuple[str, ...] = DEFAULT_DELETE_VALUES
    upsert_values: tuple[str, ...] = DEFAULT_UPSERT_VALUES

    @property
    def read_columns(self) -> dict[str, str]:
        """The extract's columns the stage reads: every configured one and the operation."""
        operation = {self.operation_column: "string"} if self.operation_column else {}
        return {**self.all_columns, **operation}

    @property
    def tracked(self) -> dict[str, str]:
        """Columns whose values decide between U and N (non-keys and sensitive)."""
        return {**self.nonkeys, **self.sensitive}

    @property
    def all_columns(self) -> dict[str, str]:
        return {**self.keys, **self.nonkeys, **self.sensitive, **self.excluded}

    @classmethod
    def from_mapping(cls, name: str, raw: Mapping[str, Any]) -> DatasetConfig:
        """Build and validate a configuration from its YAML mapping."""

        def columns(key: str) -> dict[str, str]:
            value = raw.get(key) or {}
            if not isinstance(value, Mapping):
                raise ConfigError(f"{name}: '{key}' must map column names to Spark types")
            for column, kind in value.items():
                problem = type_text_problem(str(column), kind)
                if problem:
                    raise ConfigError(f"{name}: '{key}': {problem}")
            return {str(column): str(kind) for column, kind in value.items()}

        config = cls(
            name=name,
            keys=columns("key_columns"),
            nonkeys=columns("nonkey_columns"),
            sensitive=columns("sensitive_columns"),
            excluded=columns("excluded_columns"),
            mode=str(raw.get("extract_mode", "full")),
            file_format=str(raw.get("extract_format", "csv")),
            max_delete_fraction=_fraction(name, raw.get("max_delete_fraction")),
            operation_column=str(raw["operation_column"]).strip()
            if raw.get("operation_column")
            else None,
            delete_values=_values(name, "delete_values", raw.get("delete_values")),
            upsert_values=_values(name, "upsert_values", raw.get("upsert_values")),
        )
        if not config.keys:
            raise ConfigError(f"{name}: at least one key column is needed")
        if config.mode not in EXTRACT_MODES:
            raise ConfigError(f"{name}: extract_mode must be one of {EXTRACT_MODES}")
        if config.file_format not in EXTRACT_FORMATS:
            raise ConfigError(f"{name}: extract_format must be one of {EXTRACT_FORMATS}")
        if config.operation_column and config.mode != "delta":
            raise ConfigError(
                f"{name}: operation_column is for delta extracts (extract_mode: delta); a full "
                "extract deletes the keys it lacks"
            )
        both = {v.upper() for v in config.delete_values} & {v.upper() for v in config.upsert_values}
        if both:
            raise ConfigError(
                f"{name}: {sorted(both)[0]!r} is both a delete and an upsert value (values "
                "compare ignoring case)"
            )
        empty = [c for c in config.all_columns if not c.strip()]
        if empty:
            raise ConfigError(f"{name}: a column name cannot be empty")
        unstorable = [c for c in config.read_columns if set(c) & set(DELTA_FORBIDDEN)]
        if unstorable:
            raise ConfigError(
                f"{name}: column {unstorable[0]!r} cannot be a Delta column name (none of "
                f"{DELTA_FORBIDDEN!r} may appear in one); rename it in the extract"
            )
        seen: dict[str, tuple[str, str]] = {}
        roles = {
            role: list(getattr(config, role))
            for role in ("keys", "nonkeys", "sensitive", "excluded")
        }
        roles["operation"] = [config.operation_column] if config.operation_column else []
        for role, names in roles.items():
            for column in names:
                folded = column.lower()
                if folded in seen:
                    other, other_role = seen[folded]
                    raise ConfigError(
                        f"{name}: column {column} ({role}) and {other} ({other_role}) are the "
                        "same column (Spark compares names ignoring case)"
                    )
                seen[folded] = (column, role)
        return config


def _values(name: str, setting: str, value: Any) -> tuple[str, ...]:
    """``delete_values`` or ``upsert_values``: non-empty texts, trimmed (their defaults when
    unset)."""
    if value is None or value == "":
        return DEFAULT_DELETE_VALUES if setting == "delete_values" else DEFAULT_UPSERT_VALUES
    values = [value] if isinstance(value, str | int | bool) else value
    texts = tuple(str(v).strip() for v in values) if isinstance(values, list | tuple) else ()
    if not texts or any(not text for text in texts):
        raise ConfigError(f"{name}: {setting} must be a list of non-empty values, got {value!r}")
    return texts


def _fraction(name: str, value: Any) -> float:
    if value is None or value == "":
        return DEFAULT_MAX_DELETE_FRACTION
    try:
        fraction = float(value)
    except (TypeError, ValueError):
        fraction = -1.0
    if not 0.0 <= fraction <= 1.0:
        raise ConfigError(f"{name}: max_delete_fraction must be between 0 and 1, got {value!r}")
    return fraction
