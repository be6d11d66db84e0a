"""A change-event source's settings (its YAML ``meta.change_events`` block), parsed once into
one :class:`SourceConfig`: the typed target, the allowed lateness, column evolution and the
columns it leaves out, what a truncate does, partial updates, whether a history is kept and on
which columns."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from spark_cdc.change_events.model import TRUNCATE_CHOICES, ChangeEventConfigError, TargetSchema

_DURATION = re.compile(r"^\s*(\d+)\s*(second|minute|hour|day)s?\s*$")


def parse_lateness(text: str | None) -> timedelta | None:
    """'90 minutes', '7 days' ... -> timedelta; None, '' or 'none' -> None (unbounded)."""
    if text is None or str(text).strip().lower() in ("", "none", "null"):
        return None
    match = _DURATION.match(str(text).lower())
    if not match:
        raise ChangeEventConfigError(
            f"allowed_lateness must read like '30 minutes' or '7 days', not {text!r}"
        )
    return timedelta(**{f"{match.group(2)}s": int(match.group(1))})


@dataclass(frozen=True)
class SourceConfig:
    """A change-event source: its typed target schema and the allowed lateness of its events."""

    name: str
    schema: TargetSchema
    allowed_lateness: timedelta | None = None
    evolve_columns: bool = False
    # What a truncate does: None (a feed without truncates: quarantined as an unknown change
    # type), "apply" (closes every live key) or "refuse" (the ledger run fails, writing nothing).
    truncate: str | None = None
    # Whether an update's NULL (or absent) non-key column keeps the value it had: partial
    # updates (AUTO CDC's ignore_null_updates).
    ignore_null_updates: bool = False
    # Image columns never discovered by evolve_columns (AUTO CDC's except_column_list).
    except_columns: tuple[str, ...] = ()
    # Feed columns whose values, in order, are a feed of events' position (change_events.sequence).
    sequence_by: tuple[str, ...] = ()
    # 2: a history and the current table; 1: the current table only (change_events.current_only),
    # AUTO CDC's stored_as_scd_type.
    stored_as_scd_type: int = 2
    # The columns whose change opens a new history version (AUTO CDC's
    # track_history_column_list), or those whose change does not (track_history_except); a
    # change of the others updates the open version in place (change_events.tracked). At most
    # one of the two; neither: every change is a version.
    track_history: tuple[str, ...] | None = None
    track_history_except: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        declared = {name.lower() for name in self.schema.columns}
        both = [name for name in self.except_columns if name.lower() in declared]
        if both:
            raise ChangeEventConfigError(
                f"source {self.name}: except_columns names declared columns: {', '.join(both)}"
            )
        if self.track_history is not None and self.track_history_except is not None:
            raise ChangeEventConfigError(
                f"source {self.name}: track_history and track_history_except exclude each other"
            )
        listed = self.track_history or self.track_history_except or ()
        tracking = self.track_history is not None or self.track_history_except is not None
        if tracking and self.stored_as_scd_type == 1:
            raise ChangeEventConfigError(
                f"source {self.name}: track_history needs a history (stored_as_scd_type 2)"
            )
        nonkeys = {name.lower() for name in self.schema.nonkeys}
        unknown = [name for name in listed if name.lower() not in nonkeys]
        if unknown:
            raise ChangeEventConfigError(
                f"source {self.name}: track_history lists must name declared non-key columns, "
                f"not {', '.join(unknown)}"
            )

    def tracked_columns(self, schema: TargetSchema | None = None) -> tuple[str, ...] | None:
        """The non-key columns of ``schema`` (the source's, evolved or not) whose change opens a
        new version; None when every change does. A column discovered by evolve_columns is
        tracked under track_history_except, not under track_history."""
        schema = schema or self.schema
        if self.track_history is not None:
            listed = {name.lower() for name in self.track_history}
            return tuple(c for c in schema.nonkeys if c.lower() in listed)
        if self.track_history_except is not None:
            left_out = {name.lower() for name in self.track_history_except}
            return tuple(c for c in schema.nonkeys if c.lower() not in left_out)
        return None

    @classmethod
    def from_mapping(cls, name: str, raw: Mapping[str, Any]) -> SourceConfig:
        """From YAML: columns, key_columns, allowed_lateness, evolve_columns,
        ignore_null_updates, truncate, except_columns, sequence_by, stored_as_scd_type,
        track_history and track_history_except (all but the first two optional)."""
        return cls(
            name,
            TargetSchema.from_mapping(raw),
            parse_lateness(raw.get("allowed_lateness")),
            _flag(raw, "evolve_columns"),
            truncate=parse_truncate(raw.get("truncate")),
            ignore_null_updates=_flag(raw, "ignore_null_updates"),
            except_columns=_names(raw, "except_columns"),
            sequence_by=_names(raw, "sequence_by"),
            stored_as_scd_type=parse_scd_type(raw.get("stored_as_scd_type")),
            track_history=_optional_names(raw, "track_history"),
            track_history_except=_optional_names(raw, "track_history_except"),
        )


def parse_scd_type(value: Any) -> int:
    """A source's ``stored_as_scd_type``: 1 (current only) or 2 (history and current; absent)."""
    if value is None or str(value).strip() == "":
        return 2
    if str(value).strip() not in ("1", "2"):
        raise ChangeEventConfigError(f"stored_as_scd_type must be 1 or 2, not {value!r}")
    return int(str(value).strip())


def parse_truncate(text: Any) -> str | None:
    """A source's ``truncate`` setting: apply, refuse, or None (absent, '' or 'none': a
    truncate event is quarantined as an unknown change type)."""
    if text is None or str(text).strip().lower() in ("", "none", "null"):
        return None
    choice = str(text).strip().lower()
    if choice not in TRUNCATE_CHOICES:
        raise ChangeEventConfigError(f"truncate must be apply, refuse or none, not {text!r}")
    return choice


def _names(raw: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A list of column names (absent: none)."""
    value = raw.get(name)
    if value is None:
        return ()
    if isinstance(value, str) or not all(isinstance(item, str) for item in value):
        raise ChangeEventConfigError(f"{name} must be a list of column names, not {value!r}")
    return tuple(value)


def _optional_names(raw: Mapping[str, Any], name: str) -> tuple[str, ...] | None:
    """A list of column names, or None when the setting is absent (an empty list is a list)."""
    return None if raw.get(name) is None else _names(raw, name)


def _flag(raw: Mapping[str, Any], name: str) -> bool:
    """A yes/no setting: true, 1 or yes (any case) is yes; absent is no."""
    return str(raw.get(name, False)).strip().lower() in {"true", "1", "yes"}
