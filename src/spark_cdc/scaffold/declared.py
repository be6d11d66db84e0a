"""What a dbt project declares already, by name: the sources, models and other nodes of its YAML
files and the model files of every model path, so that ``spark-cdc add`` refuses any generated
name that is taken (dbt would merge two sources of one name silently)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from spark_cdc.scaffold.names import AddError

# The YAML keys whose entries dbt names, and the kind each entry is (a source's tables are
# named within their source).
NODE_KEYS = {
    "sources": "source",
    "models": "model",
    "seeds": "seed",
    "snapshots": "snapshot",
    "analyses": "analysis",
    "exposures": "exposure",
}
MODEL_SUFFIXES = (".sql", ".py")


def yaml_declarations(text: str) -> set[tuple[str, str]]:
    """(kind, name) of every entry a dbt properties file's text declares, kind being its key in
    the singular (``source``, ``model``, ...); a file that is not a mapping declares nothing."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        return set()
    if not isinstance(document, Mapping):
        return set()
    found = set()
    for key, kind in NODE_KEYS.items():
        entries = document.get(key) or []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                found.add((kind, entry["name"]))
    return found


def planned_declarations(files: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """(kind, name) -> the planned file (path relative to the project) that declares it: the
    entries of its YAML files and the models its SQL and Python files are."""
    planned: dict[tuple[str, str], str] = {}
    for path, text in files.items():
        if path.endswith((".yml", ".yaml")):
            for declared in yaml_declarations(text):
                planned[declared] = path
        elif path.endswith(MODEL_SUFFIXES):
            planned["model", Path(path).stem] = path
    return planned


def project_declarations(root: Path, model_paths: Iterable[str]) -> dict[tuple[str, str], Path]:
    """(kind, name) -> the file of the project that declares it, over every model path (YAML
    entries and model files), the first file found for a name."""
    found: dict[tuple[str, str], Path] = {}
    for folder in (root / path for path in model_paths):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".yml", ".yaml") and path.is_file():
                for declared in yaml_declarations(path.read_text(errors="replace")):
                    found.setdefault(declared, path)
            elif path.suffix in MODEL_SUFFIXES and path.is_file():
                found.setdefault(("model", path.stem), path)
    return found


def refuse_taken_names(
    root: Path, model_paths: Iterable[str], files: Mapping[str, str], what: str
) -> None:
    """Raise AddError naming the first generated name the project declares already (in sorted
    order: the same message every time)."""
    existing = project_declarations(root, model_paths)
    planned = planned_declarations(files)
    taken = sorted(name for name in planned if name in existing)
    if taken:
        kind, name = taken[0]
        where = existing[kind, name].relative_to(root)
        raise AddError(
            f"{what}: {kind} {name} is declared already in {where} (this {what} would declare "
            f"it again in {planned[kind, name]}): nothing was written; choose another name"
        )
