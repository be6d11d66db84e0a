"""Synthetic full extracts for hash-based CDC: an initial set and incremental sets after it.

Semantics (exact counts, deterministic for a seed):

- the initial extract has ``initial_records`` rows: ``key_columns`` UUID keys (``key_1..``) and
  ``nonkey_columns`` random integers in [0, 1,000,000) (``attr_1..``);
- an incremental extract starts from the previous one: ``round(n * pct_deleted)`` rows are deleted
  (absent), ``round(n * pct_updated)`` rows keep their keys with new values (``attr_1`` always
  changes, the other attributes are redrawn), the rest are unchanged; new keys are inserted so
  that the extract has ``incremental_records`` rows (with ``incremental_records == n`` the deleted
  keys are exactly replaced by inserts);
- ``pct_deleted + pct_updated + pct_unchanged`` must be 1.0.

Vectorized with NumPy and written with Arrow (CSV or Parquet), chunk by chunk.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from spark_cdc.generators.progress import Progress, progress

VALUE_RANGE = 1_000_000
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_UUID_LAYOUT = [(0, 4), (4, 6), (6, 8), (8, 10), (10, 16)]  # byte ranges between dashes


class GeneratorError(ValueError):
    """Invalid generator parameters."""


@dataclass(frozen=True)
class ExtractPlan:
    """Exact row counts of one incremental extract relative to the previous one."""

    previous: int
    deleted: int
    updated: int
    unchanged: int
    inserted: int

    @property
    def total(self) -> int:
        return self.updated + self.unchanged + self.inserted


def plan_increment(
    previous: int,
    incremental_records: int,
    pct_deleted: float,
    pct_updated: float,
    pct_unchanged: float,
) -> ExtractPlan:
    """Counts of deleted/updated/unchanged/inserted rows; raises GeneratorError when impossible."""
    for name, value in (
        ("pct_deleted", pct_deleted),
        ("pct_updated", pct_updated),
        ("pct_unchanged", pct_unchanged),
    ):
        if not 0.0 <= value <= 1.0:
            raise GeneratorError(f"{name} must be between 0.0 and 1.0, got {value}")
    total = pct_deleted + pct_updated + pct_unchanged
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise GeneratorError(
            f"pct_deleted + pct_updated + pct_unchanged must equal 1.0, got {total:g} "
            f"({pct_deleted:g} + {pct_updated:g} + {pct_unchanged:g})"
        )
    deleted = round(previous * pct_deleted)
    updated = round(previous * pct_updated)
    unchanged = previous - deleted - updated
    if unchanged < 0:
        updated += unchanged
        unchanged = 0
    kept = updated + unchanged
    if incremental_records < kept:
        raise GeneratorError(
            f"incremental_records ({incremental_records}) must be at least the {kept} updated + "
            "unchanged rows it carries over"
        )
    return ExtractPlan(previous, deleted, updated, unchanged, incremental_records - kept)


def uuid_strings(rng: np.random.Generator, count: int) -> pa.Array:
    """``count`` random version-4 UUIDs as an Arrow string array (vectorized)."""
    raw = rng.integers(0, 256, size=(count, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    hexed = np.empty((count, 32), dtype=np.uint8)
    hexed[:, 0::2] = _HEX[raw >> 4]
    hexed[:, 1::2] = _HEX[raw & 0x0F]
    text = np.full((count, 36), ord("-"), dtype=np.uint8)
    position = 0
    for start, end in _UUID_LAYOUT:
        width = (end - start) * 2
        text[:, position : position + width] = hexed[:, start * 2 : end * 2]
        position += width + 1
    data = pa.py_buffer(text.tobytes())
    offsets = pa.py_buffer(np.arange(0, (count + 1) * 36, 36, dtype=np.int32).tobytes())
    return pa.Array.from_buffers(pa.string(), count, [None, offsets, data])


def column_names(key_columns: int, nonkey_columns: int) -> tuple[list[str], list[str]]:
    """Names of the key and non-key columns."""
    return (
        [f"key_{i + 1}" for i in range(key_columns)],
        [f"attr_{i + 1}" for i in range(nonkey_columns)],
    )


def initial_extract(
    rng: np.random.Generator, records: int, key_columns: int, nonkey_columns: int
) -> pa.Table:
    """The initial extract as an Arrow table."""
    if key_columns < 1 or nonkey_columns < 1:
        raise GeneratorError("at least one key column and one non-key column are needed")
    keys, attrs = column_names(key_columns, nonkey_columns)
    arrays = [uuid_strings(rng, records) for _ in keys]
    values = rng.integers(0, VALUE_RANGE, size=(nonkey_columns, records), dtype=np.int64)
    arrays += [pa.array(values[i]) for i in range(nonkey_columns)]
    return pa.table(arrays, names=keys + attrs)


def incremental_extract(
    rng: np.random.Generator, previous: pa.Table, plan: ExtractPlan, key_columns: int
) -> tuple[pa.Table, dict[str, np.ndarray]]:
    """The next extract, and the row indices of ``previous`` per fate (deleted, updated...)."""
    order = rng.permutation(previous.num_rows)
    fate = {
        "deleted": np.sort(order[: plan.deleted]),
        "updated": np.sort(order[plan.deleted : plan.deleted + plan.updated]),
        "unchanged": np.sort(order[plan.deleted + plan.updated :]),
    }
    names = previous.column_names
    keys, attrs = names[:key_columns], names[key_columns:]
    updated = previous.take(pa.array(fate["updated"]))
    new_values = rng.integers(0, VALUE_RANGE, size=(len(attrs), plan.updated), dtype=np.int64)
    first = updated.column(attrs[0]).to_numpy()
    # attr_1 always changes: add a non-zero offset modulo the value range.
    new_values[0] = (first + rng.integers(1, VALUE_RANGE, size=plan.updated)) % VALUE_RANGE
    updated = pa.table(
        [updated.column(k) for k in keys] + [pa.array(v) for v in new_values], names=names
    )
    unchanged = previous.take(pa.array(fate["unchanged"]))
    inserted = initial_extract(rng, plan.inserted, len(keys), len(attrs))
    table = pa.concat_tables([unchanged, updated, inserted])
    return table.take(pa.array(rng.permutation(table.num_rows))), fate


def write_extract(
    table: pa.Table, folder: Path, file_format: str, chunk_rows: int, progress: Progress | None
) -> list[Path]:
    """Write ``table`` into ``folder`` as part files of ``chunk_rows`` rows (CSV or Parquet)."""
    if file_format not in ("csv", "parquet"):
        raise GeneratorError(f"format must be csv or parquet, got {file_format}")
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("part-*"):
        stale.unlink()
    paths = []
    for index, start in enumerate(range(0, max(table.num_rows, 1), chunk_rows)):
        chunk = table.slice(start, chunk_rows)
        path = folder / f"part-{index:05d}.{file_format}"
        if file_format == "csv":
            pa_csv.write_csv(chunk, path)
        else:
            pq.write_table(chunk, path)
        paths.append(path)
        if progress is not None:
            progress.update(chunk.num_rows)
    return paths


@dataclass(frozen=True)
class ExtractSpec:
    """Parameters of one generator run (the article's, plus format, seed and days)."""

    initial_records: int
    incremental_records: int
    key_columns: int
    nonkey_columns: int
    pct_deleted: float
    pct_updated: float
    pct_unchanged: float
    outputs: tuple[Path, ...]
    file_format: str = "csv"
    seed: int = 0
    chunk_rows: int = 1_000_000


def article_example(outputs: tuple[Path, ...], seed: int = 0) -> ExtractSpec:
    """The source article's example: 10,000 records of 5 keys and 10 non-keys, then per day
    20% deleted (replaced by inserts), 40% updated, 40% unchanged."""
    return ExtractSpec(10_000, 10_000, 5, 10, 0.2, 0.4, 0.4, outputs, seed=seed)


def generate_extracts(spec: ExtractSpec, show_progress: bool = True) -> list[dict]:
    """Write the initial extract to ``outputs[0]`` and one incremental extract to each further
    output; return, per output, the manifest (counts per operation) also written beside it."""
    if len(spec.outputs) < 1:
        raise GeneratorError("at least one output folder is needed")
    rng = np.random.default_rng(spec.seed)
    plans = []
    previous = spec.initial_records
    for _ in spec.outputs[1:]:
        plan = plan_increment(
            previous,
            spec.incremental_records,
            spec.pct_deleted,
            spec.pct_updated,
            spec.pct_unchanged,
        )
        plans.append(plan)
        previous = plan.total
    total_rows = spec.initial_records + sum(p.total for p in plans)
    manifests = []
    with progress(total_rows, "extracts", "rows", show_progress) as bar:
        table = initial_extract(rng, spec.initial_records, spec.key_columns, spec.nonkey_columns)
        write_extract(table, Path(spec.outputs[0]), spec.file_format, spec.chunk_rows, bar)
        manifests.append(
            {
                "rows": table.num_rows,
                "inserted": table.num_rows,
                "updated": 0,
                "deleted": 0,
                "unchanged": 0,
            }
        )
        for output, plan in zip(spec.outputs[1:], plans, strict=True):
            table, _ = incremental_extract(rng, table, plan, spec.key_columns)
            write_extract(table, Path(output), spec.file_format, spec.chunk_rows, bar)
            manifests.append(
                {
                    "rows": table.num_rows,
                    **{k: v for k, v in asdict(plan).items() if k != "previous"},
                }
            )
    for output, manifest in zip(spec.outputs, manifests, strict=True):
        (Path(output) / "_manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifests
