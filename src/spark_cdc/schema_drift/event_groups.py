"""Event groups: a feed's event types split among several silver queries.

A grouping is an ordered list of named groups, each with selectors: a glob on the event type
(``order_*``, or a plain name) or a hash bucket (``hash:I/N``: the types whose stable hash
modulo N is I). An event type belongs to the first group, in the grouping's order, one of whose
selectors takes it, so groups never share a type, and the grouping must take every type (a group
with ``*``, or every bucket of some N): a type no group takes would never reach silver.

A grouping is a setting of the feed (``meta.schema_drift.event_groups`` on its silver-loads
model), read by every process of the feed, and is recorded in the feed's grouping table the first
time a group starts: a group started with another grouping is refused (two groupings at once
could give one type two writers), as are the ungrouped silver writers (``dbt build`` of the
silver model, the one-query stream) while a grouping is recorded.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

GROUP_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_HASH = re.compile(r"^hash:(\d+)/(\d+)$")


class GroupingError(ValueError):
    """A grouping that is malformed, incomplete, or not the feed's recorded one."""


def type_bucket(event_type: str, buckets: int) -> int:
    """The event type's hash bucket of ``buckets``: the same in every process and release."""
    digest = hashlib.sha256(event_type.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % buckets


@dataclass(frozen=True)
class EventGroup:
    """One group: its name and selectors (globs and ``hash:I/N``)."""

    name: str
    selectors: tuple[str, ...]

    def takes(self, event_type: str) -> bool:
        """Whether one of the group's selectors takes ``event_type``."""
        for selector in self.selectors:
            bucket = _HASH.match(selector)
            if bucket is not None:
                if type_bucket(event_type, int(bucket[2])) == int(bucket[1]):
                    return True
            elif fnmatch.fnmatchcase(event_type, selector):
                return True
        return False


@dataclass(frozen=True)
class Grouping:
    """The feed's groups, in order."""

    groups: tuple[EventGroup, ...]

    def group_of(self, event_type: str) -> str:
        """The name of the group that takes ``event_type``."""
        for group in self.groups:
            if group.takes(event_type):
                return group.name
        raise GroupingError(f"no event group takes event type {event_type!r}")  # not complete

    def types_of(self, group: str, event_types: Iterable[str]) -> list[str]:
        """Of ``event_types``, those ``group`` takes, sorted."""
        self.group(group)
        return sorted({t for t in event_types if self.group_of(t) == group})

    def group(self, name: str) -> EventGroup:
        """The group called ``name``."""
        for group in self.groups:
            if group.name == name:
                return group
        names = ", ".join(g.name for g in self.groups)
        raise GroupingError(f"no event group {name!r} (the feed's groups: {names})")

    def as_rows(self) -> list[tuple[int, str, str]]:
        """(position, group, selector) rows, as the grouping table records them (positions
        keep the order of groups and of their selectors)."""
        pairs = [(group.name, selector) for group in self.groups for selector in group.selectors]
        return [(position, name, selector) for position, (name, selector) in enumerate(pairs)]

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, str, str]]) -> Grouping:
        """The grouping of recorded rows (:meth:`as_rows`)."""
        ordered: dict[str, list[str]] = {}
        for _, name, selector in sorted(rows):
            ordered.setdefault(name, []).append(selector)
        return cls(tuple(EventGroup(name, tuple(s)) for name, s in ordered.items()))


def _selectors(name: str, value: object) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise GroupingError(f"event group {name}: give a selector or a list of selectors")
    selectors = []
    for item in items:
        text = str(item).strip()
        if not text:
            raise GroupingError(f"event group {name}: an empty selector")
        if text.startswith("hash:"):
            bucket = _HASH.match(text)
            if bucket is None or int(bucket[2]) < 1 or int(bucket[1]) >= int(bucket[2]):
                raise GroupingError(
                    f"event group {name}: {text!r} is not a hash bucket (hash:I/N, 0 <= I < N)"
                )
        selectors.append(text)
    return tuple(selectors)


def _complete(groups: list[EventGroup]) -> bool:
    """Whether every event type is taken: a ``*`` selector, or every bucket of some N."""
    selectors = [s for g in groups for s in g.selectors]
    if "*" in selectors:
        return True
    buckets: dict[int, set[int]] = {}
    for selector in selectors:
        bucket = _HASH.match(selector)
        if bucket is not None:
            buckets.setdefault(int(bucket[2]), set()).add(int(bucket[1]))
    return any(len(taken) == n for n, taken in buckets.items())


def parse_grouping(setting: Mapping[str, object] | None) -> Grouping | None:
    """The grouping of a feed's ``event_groups`` setting (group name -> selectors), None when
    the feed has none."""
    if not setting:
        return None
    if not isinstance(setting, Mapping):
        raise GroupingError("event_groups: a mapping of group name to selectors")
    groups = []
    for name, value in setting.items():
        if not GROUP_NAME.match(str(name)):
            raise GroupingError(
                f"event group {name!r}: a name of lower-case letters, digits and _ "
                "(it names the group's tables), starting with a letter"
            )
        groups.append(EventGroup(str(name), _selectors(str(name), value)))
    if not _complete(groups):
        raise GroupingError(
            "event_groups must take every event type: give one group '*' (the rest), or "
            "every bucket hash:0/N ... hash:N-1/N"
        )
    return Grouping(tuple(groups))
