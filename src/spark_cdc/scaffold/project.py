"""The dbt project ``spark-cdc add`` writes into, and writing its files (never overwriting)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from spark_cdc.scaffold.names import AddError


@dataclass(frozen=True)
class Project:
    """A dbt project's folder, name, first model path (where add writes) and every model path."""

    root: Path
    name: str
    model_path: str
    model_paths: tuple[str, ...] = ()

    @property
    def models(self) -> Path:
        return self.root / self.model_path


def find_project(project_dir: Path | None) -> Project:
    """The dbt project of ``project_dir`` (default: the current folder)."""
    root = (project_dir or Path.cwd()).resolve()
    path = root / "dbt_project.yml"
    if not path.is_file():
        raise AddError(
            f"{root} is not a dbt project (no dbt_project.yml): run spark-cdc add inside "
            "your dbt project, or give --project-dir"
        )
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise AddError(f"{path} cannot be read: {error}") from None
    paths = config.get("model-paths") or ["models"]
    if "{{" in str(paths[0]) or "{%" in str(paths[0]):
        raise AddError(
            f"{path}: the first model path is a Jinja expression ({paths[0]}): spark-cdc add "
            "writes to a plain folder; list it first in model-paths"
        )
    plain = tuple(str(p) for p in paths if "{{" not in str(p) and "{%" not in str(p))
    return Project(root, str(config.get("name", root.name)), str(paths[0]), plain)


def existing_models(project: Project, names: list[str]) -> list[Path]:
    """Files of the project's model folders already named like one of ``names``."""
    found = []
    for name in names:
        for suffix in (".sql", ".py"):
            found += sorted(project.models.rglob(f"{name}{suffix}"))
    return found


def write_files(project: Project, files: dict[str, str], dry_run: bool) -> list[str]:
    """Write ``files`` (path relative to the project -> text); refuses if any exists."""
    taken = [rel for rel in files if (project.root / rel).exists()]
    if taken:
        raise AddError(f"{taken[0]} already exists: nothing was written (remove it first)")
    if not dry_run:
        for rel, text in files.items():
            target = project.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    return list(files)
