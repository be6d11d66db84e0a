"""Run dbt commands in-process (dbtRunner) on the project's embedded Spark application."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from spark_cdc.dbt_project_files import profiles_dir as default_profiles_dir
from spark_cdc.dbt_project_files import project_root


class DbtCommandError(RuntimeError):
    """A dbt command did not succeed."""


def run_dbt(
    args: Sequence[str],
    project_dir: Path | None = None,
    profiles_dir: Path | None = None,
    expect_success: bool = True,
    callbacks: Sequence[Callable[[Any], None]] = (),
) -> Any:
    """Invoke ``dbt <args>`` in this process and return dbt's result object; ``callbacks``
    receive every event dbt fires (its SQL statements included).

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


def copy_project(destination: Path, source: Path | None = None) -> Path:
    """Copy the dbt project without its local state (venv, warehouse, target) to ``destination``.

    Tests and benchmarks run and alter such copies freely.
    """
    ignore = shutil.ignore_patterns(
        ".venv",
        ".spark_cdc",
        "target",
        "logs",
        ".git",
        "__pycache__",
        "*.egg-info",
        "data",
        "dbt_packages",
        "package-lock.yml",
    )
    shutil.copytree(source or project_root(), destination, ignore=ignore)
    return destination


SNAPSHOT_OVERRIDES = (
    "build_snapshot_table.sql",
    "snapshot_staging_table.sql",
    "snapshot_merge.sql",
    "snapshot_cached_changes.sql",
)


def remove_snapshot_overrides(project: Path) -> None:
    """Make a project copy snapshot exactly as stock dbt-spark does (for comparisons)."""
    for name in SNAPSHOT_OVERRIDES:
        (project / "macros" / "snapshots" / name).unlink()


def snapshot_variant(
    destination: Path,
    schema_suffix: str,
    extra_files: dict[str, str],
    stock: bool,
    source: Path | None = None,
) -> Path:
    """A project copy for comparisons: extra files (path -> text), snapshots in their own schema
    (``spark_cdc_<schema_suffix>``), and stock dbt-spark snapshot macros when ``stock``."""
    project = copy_project(destination, source)
    for relative, text in extra_files.items():
        (project / relative).write_text(text)
    settings = project / "dbt_project.yml"
    settings.write_text(
        settings.read_text().replace(
            "snapshots:\n  spark_cdc:\n",
            f"snapshots:\n  spark_cdc:\n    +schema: {schema_suffix}\n",
        )
    )
    if stock:
        remove_snapshot_overrides(project)
    return project
