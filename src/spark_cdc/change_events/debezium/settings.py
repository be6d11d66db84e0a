"""The connector settings a Debezium source's values are read with (the source's ``debezium``
block: the connector's own setting names, and what this project adds)."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_cdc.change_events.model import TRUNCATE_CHOICES

DECIMAL_MODES = ("precise", "double", "string")
TIME_MODES = ("adaptive", "adaptive_time_microseconds", "connect", "isostring")
BINARY_MODES = ("bytes", "base64", "base64-url-safe", "hex")
DEFAULT_PLACEHOLDER = "__debezium_unavailable_value"
# What the setting column.logical.types may name for a column (decode reads them as a schema's).
SETTING_NAMES = (
    "decimal.handling.mode",
    "time.precision.mode",
    "binary.handling.mode",
    "unavailable.value.placeholder",
    "column.logical.types",
    "truncate",
)


@dataclass(frozen=True)
class DebeziumSettings:
    """The connector's settings a source's values are read with where a message carries no
    schema (``column_logical_types``: a column's Debezium logical type, as its schema would name
    it, for what the other settings leave open: the unit of an epoch number under
    ``time.precision.mode=adaptive``)."""

    decimal_handling_mode: str = "precise"
    time_precision_mode: str = "adaptive"
    unavailable_value_placeholder: str = DEFAULT_PLACEHOLDER
    truncate: str = "apply"
    binary_handling_mode: str = "bytes"
    # (column, logical type) pairs: hashable, so settings can key a plan
    column_logical_types: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> DebeziumSettings:
        """From the source's ``debezium`` block (the connector's own setting names)."""
        raw = dict(raw or {})
        unknown = sorted(set(raw) - set(SETTING_NAMES))
        if unknown:
            raise ValueError(
                f"change_events.debezium: unknown settings {unknown}; known: {list(SETTING_NAMES)}"
            )
        logical = raw.get("column.logical.types") or {}
        if not isinstance(logical, Mapping):
            raise ValueError("change_events.debezium.column.logical.types must map column: type")
        settings = cls(
            str(raw.get("decimal.handling.mode", cls.decimal_handling_mode)).lower(),
            str(raw.get("time.precision.mode", cls.time_precision_mode)).lower(),
            str(raw.get("unavailable.value.placeholder", cls.unavailable_value_placeholder)),
            str(raw.get("truncate", cls.truncate)).lower(),
            str(raw.get("binary.handling.mode", cls.binary_handling_mode)).lower(),
            tuple(sorted((str(k), str(v)) for k, v in logical.items())),
        )
        for name, value, allowed in (
            ("decimal.handling.mode", settings.decimal_handling_mode, DECIMAL_MODES),
            ("time.precision.mode", settings.time_precision_mode, TIME_MODES),
            ("binary.handling.mode", settings.binary_handling_mode, BINARY_MODES),
            ("truncate", settings.truncate, TRUNCATE_CHOICES),
        ):
            if value not in allowed:
                raise ValueError(f"change_events.debezium.{name} must be one of {allowed}")
        if not settings.unavailable_value_placeholder:
            raise ValueError("change_events.debezium.unavailable.value.placeholder is empty")
        settings.placeholder_bytes()  # a hex: form that is not hex fails here
        return settings

    def logical_type(self, column: str) -> str | None:
        """The logical type ``column.logical.types`` names for ``column``, if any."""
        return dict(self.column_logical_types).get(column)

    def placeholder_bytes(self) -> bytes:
        """The placeholder's bytes: the setting's UTF-8, or its ``hex:`` form's bytes."""
        text = self.unavailable_value_placeholder
        if text.startswith("hex:"):
            try:
                return bytes.fromhex(text[4:])
            except ValueError as error:
                raise ValueError(
                    "change_events.debezium.unavailable.value.placeholder: not hex after 'hex:'"
                ) from error
        return text.encode()

    def placeholders(self) -> tuple[str, ...]:
        """Every shape of the placeholder in an image, as Spark reads it into text: the string
        (text, json, uuid, enum), its bytes in base64 (bytea), a one-element list of the
        string (text[], varchar[], uuid[]) or of the base64 bytes (bytea[]), the list of its
        bytes as numbers (int[], bigint[]; Java's signed bytes), and a map of the string to
        itself (hstore)."""
        raw = self.placeholder_bytes()
        text = raw.decode(errors="replace")
        encoded = base64.b64encode(raw).decode()
        compact = {"separators": (",", ":")}
        signed = [b - 256 if b > 127 else b for b in raw]
        return tuple(
            dict.fromkeys(
                (
                    text,
                    encoded,
                    json.dumps([text], ensure_ascii=False, **compact),
                    json.dumps([encoded], **compact),
                    json.dumps(signed, **compact),
                    json.dumps({text: text}, ensure_ascii=False, **compact),
                )
            )
        )
