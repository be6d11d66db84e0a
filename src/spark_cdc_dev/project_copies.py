"""Copies of the dbt project that tests and benchmarks run and alter freely."""

from __future__ import annotations

import shutil
from pathlib import Path

from spark_cdc.core.dbt_project_files import project_root


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
    "snapshot_flow.sql",
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
    (``<profile schema>_<suffix>``), and stock dbt-spark snapshot macros when ``stock``."""
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
