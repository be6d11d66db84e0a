"""Configuration of one hash-CDC dataset (declared in YAML, under the staging model's meta)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EXTRACT_MODES = ("full", "delta")


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
    - ``mode``: ``full`` (a missing key is deleted, D) or ``delta`` (a missing key is X).
    """

    name: str
    keys: dict[str, str]
    nonkeys: dict[str, str]
    sensitive: dict[str, str] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)
    mode: str = "full"

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
            return {str(column): str(kind) for column, kind in value.items()}

        config = cls(
            name=name,
            keys=columns("key_columns"),
            nonkeys=columns("nonkey_columns"),
            sensitive=columns("sensitive_columns"),
            excluded=columns("excluded_columns"),
            mode=str(raw.get("extract_mode", "full")),
        )
        if not config.keys:
            raise ConfigError(f"{name}: at least one key column is needed")
        if config.mode not in EXTRACT_MODES:
            raise ConfigError(f"{name}: extract_mode must be one of {EXTRACT_MODES}")
        seen: dict[str, str] = {}
        for role in ("keys", "nonkeys", "sensitive", "excluded"):
            for column in getattr(config, role):
                if column in seen:
                    raise ConfigError(f"{name}: column {column} is both {seen[column]} and {role}")
                seen[column] = role
        return config
