"""Plain-Python model of hash CDC's compare rules (compare.py), for tests on generated data.

State: key tuple -> (payload dict, operation, eff_start_date). Rows are dicts of typed values;
"same hash" is equality of the tracked (non-key + sensitive) values, NULL equal to NULL. Held
keys (supplied by quarantined rows only) keep their state exactly. With an operation column
(delta extracts), a row whose operation is one of the delete values closes its live key as D
(keeping its payload), and a key the extract lacks keeps its state.
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
    held: Iterable[tuple] = (),
    defer_deletes: bool = False,
) -> dict[tuple, ReferenceRow]:
    """The state after applying one valid extract (unique keys) on ``effective_date``; ``held``
    keys (of quarantined rows) keep their state as it is, and so do the keys a full extract
    lacks when ``defer_deletes`` (it had rows whose key could not be read)."""
    missing_op = "D" if config.mode == "full" else "X"
    rows = list(incoming)
    deletes = {tuple(row[k] for k in config.keys) for row in rows if _is_delete(row, config)}
    supplied = {
        tuple(row[k] for k in config.keys): row for row in rows if not _is_delete(row, config)
    }
    held = set(held) - set(supplied) - deletes
    result: dict[tuple, ReferenceRow] = {key: current[key] for key in held if key in current}
    for key in deletes:
        before = current.get(key)
        if before is not None:
            closed = before.operation == "D"
            result[key] = before if closed else ReferenceRow(before.payload, "D", effective_date)
    for key, row in supplied.items():
        before = current.get(key)
        if before is None or before.operation == "D":
            result[key] = ReferenceRow(row, "I", effective_date)
        elif _tracked(row, config) != _tracked(before.payload, config):
            result[key] = ReferenceRow(row, "U", effective_date)
        else:
            result[key] = ReferenceRow(before.payload, "N", before.eff_start_date)
    for key, before in current.items():
        if key in supplied or key in held or key in deletes:
            continue
        if (
            config.operation_column
            or before.operation in ("D", missing_op)
            or (defer_deletes and missing_op == "D")
        ):
            result[key] = before
        else:
            result[key] = ReferenceRow(before.payload, missing_op, effective_date)
    return result


def _is_delete(row: dict, config: DatasetConfig) -> bool:
    if not config.operation_column:
        return False
    operation = str(row.get(config.operation_column) or "").strip().upper()
    return operation in {value.upper() for value in config.delete_values}
