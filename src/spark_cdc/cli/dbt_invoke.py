"""Run dbt commands in-process (dbtRunner) on the project's embedded Spark application."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from spark_cdc.core.dbt_project_files import profiles_dir as default_profiles_dir
from spark_cdc.core.dbt_project_files import project_root


class DbtCommandError(RuntimeError):
    """A dbt command did not succeed."""


def run_dbt(
    args: Sequence[str],
    project_dir: Path | None = None,
    profiles_dir: Path | None = None,
    expect_success: bool = True,
    callbacks: Sequence[Callable[[Any], None]] = (),
    target: str | None = None,
) -> Any:
    """Invoke ``dbt <args>`` in this process and return dbt's result object; ``callbacks``
    receive every event dbt fires (its SQL statements included).

    ``target``: the profile's target (dbt's ``--target``; None: the profile's default).
    Raises :class:`DbtCommandError` when the command fails and ``expect_success`` is set.
    """
    from dbt.cli.main import dbtRunner

    project = project_dir or project_root()
    profiles = profiles_dir or default_profiles_dir()
    full_args = [
        *args,
        "--project-dir",
        str(project),
        "--profiles-dir",
        str(profiles),
        *(["--target", target] if target else []),
    ]
    result = dbtRunner(callbacks=list(callbacks)).invoke(full_args)
    if expect_success and not result.success:
        detail = result.exception or _failed_nodes(result)
        raise DbtCommandError(f"dbt {' '.join(args)} failed: {detail}")
    return result


def _failed_nodes(result: Any) -> str:
    """Names and messages of the nodes that did not pass."""
    rows = getattr(result, "result", None)
    if rows is None or not hasattr(rows, "results"):
        return "see the dbt log"
    failed = [
        f"{row.node.unique_id}: {row.message}"
        for row in rows.results
        if str(row.status) not in ("success", "pass", "skipped")
    ]
    return "; ".join(failed) or "see the dbt log"


def node_statuses(result: Any) -> list[tuple[str, str]]:
    """(node name, status) of each node a dbt command ran (its on-run-start/end hooks left out)."""
    rows = getattr(result, "result", None)
    if rows is None or not hasattr(rows, "results"):
        return []
    return [
        (row.node.name, str(row.status))
        for row in rows.results
        if str(getattr(row.node, "resource_type", "")) != "operation"
    ]


def last_invocation_id() -> str:
    """The invocation_id of the latest dbt command run in this process (its process id)."""
    from dbt_common.invocation import get_invocation_id

    return get_invocation_id()
