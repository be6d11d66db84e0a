"""The library's modules form layers: each imports only its own layer or those below, and no
module imports another that (directly or not) imports it back. Every import counts, those inside
functions too (they hide cycles, not remove them)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from support import PROJECT_DIR

# Reads source files only (its module names would otherwise look like Spark starters to the
# tier's file scan in conftest.py).
pytestmark = pytest.mark.unit

SOURCE = PROJECT_DIR / "src"

# Bottom to top. A module belongs to the first layer one of whose names is its own or a prefix
# of it (``spark_cdc.change_events`` covers the package). The adapter sits above the library.
LAYERS: list[tuple[str, list[str]]] = [
    ("core", ["spark_cdc.core"]),
    ("session", ["spark_cdc.session"]),
    ("engine", ["spark_cdc.engine"]),
    ("targets", ["spark_cdc.targets"]),
    ("hash_cdc", ["spark_cdc.hash_cdc"]),
    ("schema_drift", ["spark_cdc.schema_drift"]),
    ("change_events", ["spark_cdc.change_events"]),
    ("models", ["spark_cdc.dbt_models", "spark_cdc.generators", "spark_cdc.scaffold"]),
    ("commands", ["spark_cdc.cli"]),
    ("adapter", ["dbt.adapters.sparkcdc", "dbt.include.sparkcdc"]),
    ("project tools", ["spark_cdc_dev"]),
]


def _modules() -> dict[str, Path]:
    modules = {}
    for path in SOURCE.rglob("*.py"):
        if ".egg-info" in str(path):
            continue
        name = ".".join(path.relative_to(SOURCE).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (anywhere in its body)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for target in targets:
                if target in modules and target != name:
                    edges[name].add(target)
    return edges


def _layer(module: str) -> int:
    for index, (_, names) in enumerate(LAYERS):
        if any(module == n or module.startswith(f"{n}.") for n in names):
            return index
    if module == "spark_cdc":
        return 0  # the package itself: its version only
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer():
    for module in _modules():
        _layer(module)


def test_no_module_imports_a_layer_above_its_own():
    edges = _imports(_modules())
    upward = sorted(
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in edges.items()
        for target in targets
        if _layer(target) > _layer(module)
    )
    assert upward == []


def test_no_import_cycle():
    assert _cycles(_imports(_modules())) == []


def test_the_check_sees_a_cycle_and_an_upward_import():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert (
        _layer("spark_cdc.session.runtime")
        < _layer("spark_cdc.engine.server")
        < _layer("spark_cdc.cli.main")
    )


def test_the_library_keeps_its_modules_in_packages_by_layer():
    """Beside its packages, ``src/spark_cdc`` holds only its ``__init__`` and the one-module
    layer ``targets``."""
    loose = sorted(p.name for p in (SOURCE / "spark_cdc").glob("*.py"))
    assert loose == ["__init__.py", "targets.py"]


def test_the_layout_table_names_every_package_of_the_tree():
    page = (PROJECT_DIR / "docs" / "development.md").read_text()
    found = SOURCE.glob("spark_cdc*/*/__init__.py")
    packages = ["spark_cdc_dev", *(p.parent.relative_to(SOURCE).as_posix() for p in found)]
    for package in packages:
        name = package.split("/")[-1]
        assert f"`src/{package}/`" in page or f"`{name}/`" in page, package


def test_every_package_of_the_library_has_an_init():
    """A folder without ``__init__.py`` would import as a namespace package here and be left
    out of the wheel."""
    folders = {p.parent for p in SOURCE.glob("spark_cdc*/**/*.py")}
    assert sorted(str(f) for f in folders if not (f / "__init__.py").exists()) == []
