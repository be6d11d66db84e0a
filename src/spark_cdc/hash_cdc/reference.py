"""Plain-Python model of hash CDC's compare rules (compare.py), for tests on generated data.

State: key tuple -> (payload dict, operation, eff_start_date). Rows are dicts of typed values;
"same hash" is equality of the tracked (non-key + sensitive) values, NULL equal to NULL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spark_cdc.hash_cdc.config import DatasetConfig


@dataclass(frozen=True)
class ReferenceRow:
    """One key's state: its payload, last operation and the date of its last change."""

    payload: dict
    operation: str
    eff_start_date: str


def _tracked(row: dict, config: DatasetConfig) -> tuple:
    return tuple(row.get(column) for column in sorted(config.tracked))


def reference_apply(
    current: dict[tuple, ReferenceRow],
    incoming: Iterable[dict],
    config: DatasetConfig,
    effective_date: str,
) -> dict[tuple, ReferenceRow]:
    """The state after applying one valid extract (unique keys) on ``effective_date``."""
    missing_op = "D" if config.mode == "full" else "X"
    supplied = {tuple(row[k] for k in config.keys): row for row in incoming}
    result: dict[tuple, ReferenceRow] = {}
    for key, row in supplied.items():
        before = current.get(key)
        if before is None or before.operation == "D":
            result[key] = ReferenceRow(row, "I", effective_date)
        elif _tracked(row, config) != _tracked(before.payload, config):
            result[key] = ReferenceRow(row, "U", effective_date)
        else:
            result[key] = ReferenceRow(before.payload, "N", before.eff_start_date)
    for key, before in current.items():
        if key in supplied:
            continue
        if before.operation in ("D", missing_op):
            result[key] = before
        else:
            result[key] = ReferenceRow(before.payload, missing_op, effective_date)
    return result
