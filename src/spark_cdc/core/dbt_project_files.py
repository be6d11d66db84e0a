"""Where the dbt project and its profiles are, by the rules dbt itself follows."""

from __future__ import annotations

import os
from pathlib import Path


class ProjectNotFoundError(RuntimeError):
    """No dbt_project.yml in the current folder or its parents (and none configured)."""


def project_root() -> Path:
    """The dbt project: ``$SPARK_CDC_PROJECT_DIR`` or the nearest parent with dbt_project.yml."""
    configured = os.environ.get("SPARK_CDC_PROJECT_DIR")
    if configured:
        return Path(configured).resolve()
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "dbt_project.yml").exists():
            return folder
    raise ProjectNotFoundError("No dbt_project.yml found: run from the project folder")


def profiles_dir() -> Path:
    """Where profiles.yml is, by dbt's own rule: ``$DBT_PROFILES_DIR`` (what ``--profiles-dir``
    sets here), else the current folder if it holds one, else ``~/.dbt``."""
    if os.environ.get("DBT_PROFILES_DIR"):
        return Path(os.environ["DBT_PROFILES_DIR"])
    from dbt.cli.resolvers import default_profiles_dir

    return Path(default_profiles_dir())
