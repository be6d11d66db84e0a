"""The package states ranges; constraints/lowest.txt holds their lower bounds, constraints/lock.txt
one version of each inside them, and dbt_project.yml's require-dbt-version dbt-core's range."""

from __future__ import annotations

import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from support import PROJECT_DIR, canonical_name, constraint_pins

CONSTRAINTS = PROJECT_DIR / "constraints"


def _requirements() -> dict[str, Requirement]:
    """The runtime dependencies, by canonical name."""
    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    return {canonical_name(r.name): r for r in map(Requirement, project["dependencies"])}


def _extras() -> dict[str, list[Requirement]]:
    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    return {k: [Requirement(r) for r in v] for k, v in project["optional-dependencies"].items()}


def _pins(name: str) -> dict[str, str]:
    return constraint_pins(CONSTRAINTS / name)


def _lower_bound(specifier: SpecifierSet) -> str:
    (lower,) = [s.version for s in specifier if s.operator == ">="]
    return lower


def test_every_dependency_is_a_range_with_both_bounds():
    for name, requirement in {**_requirements()}.items():
        operators = {s.operator for s in requirement.specifier}
        assert ">=" in operators and "<" in operators, f"{name}: {requirement.specifier}"
    for extra, requirements in _extras().items():
        for requirement in requirements:
            if canonical_name(requirement.name) != "spark-cdc":
                assert "==" not in {s.operator for s in requirement.specifier}, (extra, requirement)


def test_lowest_holds_the_lower_bound_of_every_runtime_dependency():
    lowest = _pins("lowest.txt")
    expected = {name: _lower_bound(r.specifier) for name, r in _requirements().items()}
    assert lowest == expected


def test_the_lock_pins_every_dependency_inside_its_range():
    lock = _pins("lock.txt")
    wanted = list(_requirements().values())
    extras = [r for reqs in _extras().values() for r in reqs]
    wanted += [r for r in extras if canonical_name(r.name) != "spark-cdc"]
    for requirement in wanted:
        name = canonical_name(requirement.name)
        assert name in lock, f"{name} is not in the lock"
        assert requirement.specifier.contains(lock[name]), (
            f"{name}=={lock[name]} outside {requirement}"
        )


def test_require_dbt_version_is_dbt_cores_range():
    specifier = _requirements()["dbt-core"].specifier
    for project in ("dbt_project.yml", "integration_tests/dbt_project.yml"):
        required = yaml.safe_load((PROJECT_DIR / project).read_text())["require-dbt-version"]
        assert SpecifierSet(",".join(required)) == specifier, project
