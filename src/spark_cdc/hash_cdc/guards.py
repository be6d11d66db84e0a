"""Guard rails of a hash-CDC run: refuse what looks like an upstream failure, write nothing.

A full extract says "these are all the rows": a key it lacks is deleted. So an extract that came
out empty, or much smaller than it should, would delete what it lacks. Before anything is written:

- a full extract of zero rows is refused;
- a full extract that would delete more than ``max_delete_fraction`` (per dataset, default 0.5)
  of the keys live before it is refused.

``hash_cdc_allow_mass_delete: true`` (a dbt var) lets such a run through, once, when the deletes
are real. Delta extracts delete nothing (a missing key is X), so neither guard applies to them.
"""

from __future__ import annotations

from spark_cdc.hash_cdc.compare import DecisionCounts
from spark_cdc.hash_cdc.config import DatasetConfig

ALLOW_VAR = "hash_cdc_allow_mass_delete"


class MassDeleteError(RuntimeError):
    """A full extract that would delete too much; nothing was written."""


def _override() -> str:
    return f"if the deletes are real, re-run with --vars '{{{ALLOW_VAR}: true}}'"


def check_not_empty(
    config: DatasetConfig, effective_date: str, rows_in: int, allowed: bool
) -> None:
    """Refuse a full extract of zero rows (unless ``allowed``)."""
    if config.mode == "full" and rows_in == 0 and not allowed:
        raise MassDeleteError(
            f"hash CDC {config.name} {effective_date}: the full extract has zero rows, which "
            "would delete every key; refused, nothing was written. An empty extract is usually "
            f"an upstream failure: check the extract; {_override()}"
        )


def delete_fraction(counts: DecisionCounts) -> float:
    """Share of the keys live before the run that the run deletes (0 when none were live)."""
    return counts.deleted / counts.live_before if counts.live_before else 0.0


def check_deletes(
    config: DatasetConfig, effective_date: str, counts: DecisionCounts, allowed: bool
) -> None:
    """Refuse a full extract whose deletes exceed the dataset's max_delete_fraction."""
    fraction = delete_fraction(counts)
    if config.mode != "full" or allowed or fraction <= config.max_delete_fraction:
        return
    raise MassDeleteError(
        f"hash CDC {config.name} {effective_date}: the full extract would delete "
        f"{counts.deleted:,} of {counts.live_before:,} live keys ({fraction:.1%}, above "
        f"max_delete_fraction {config.max_delete_fraction:g}; {counts.held:,} keys held by "
        f"quarantined rows); refused, nothing was written. Check the extract; {_override()}"
    )
