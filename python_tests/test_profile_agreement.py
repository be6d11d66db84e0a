"""spark-cdc and dbt read one profile truth: for every lookup rule (DBT_PROFILES_DIR, a
profiles.yml in the current folder, ~/.dbt, --profiles-dir, --target, the profile's own
env_var default) both resolve the same target, with the same method and host."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support import BIN, command_env, copy_project

INLINE = "select '{{ target.name }}|{{ target.method }}|{{ target.host }}' as t"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("agree") / "spark_cdc")


def _env(**extra: str) -> dict[str, str]:
    return command_env(drop=("SPARK_CDC_", "DBT_", "PYTEST_CURRENT_TEST"), profiles=None, **extra)


def _resolved(project: Path, env: dict[str, str], flags: list[str]) -> tuple[tuple, tuple]:
    ours = subprocess.run(
        [str(BIN / "spark-cdc"), *flags, "target"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert ours.returncode == 0, ours.stderr
    # "profile P (path), target T: method M, host H"
    line = ours.stdout.strip().splitlines()[-1]
    name = line.split("target ", 1)[1].split(":", 1)[0]
    method = line.split("method ", 1)[1].split(",", 1)[0]
    host = line.split("host ", 1)[1]
    theirs = subprocess.run(
        [str(BIN / "dbt"), "compile", "--inline", INLINE, "--no-populate-cache", *flags],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert theirs.returncode == 0, theirs.stdout[-2000:]
    compiled = theirs.stdout.strip().splitlines()[-1]
    return (name, method, host), tuple(compiled.split("'")[1].split("|"))


def test_every_lookup_rule_gives_both_the_same_target(project, tmp_path):
    bundled = project / "profiles"
    home = tmp_path / "home"
    (home / ".dbt").mkdir(parents=True)
    text = (bundled / "profiles.yml").read_text()
    (home / ".dbt" / "profiles.yml").write_text(text.replace("'engine'", "'thrift'", 1))
    flags = ["--profiles-dir", str(bundled), "--target", "local"]
    cases = [
        ("DBT_PROFILES_DIR", _env(DBT_PROFILES_DIR=str(bundled), HOME=str(home)), []),
        ("env_var", _env(DBT_PROFILES_DIR=str(bundled), SPARK_CDC_TARGET="cluster"), []),
        ("~/.dbt", _env(HOME=str(home)), []),
        ("--profiles-dir --target", _env(HOME=str(home)), flags),
    ]
    seen = set()
    for rule, env, flags in cases:
        ours, theirs = _resolved(project, env, flags)
        assert ours == theirs, rule
        seen.add(ours[0])
    assert seen == {"engine", "cluster", "thrift", "local"}
    # A profiles.yml in the current folder wins over ~/.dbt, for both.
    shutil.copy(bundled / "profiles.yml", project / "profiles.yml")
    try:
        ours, theirs = _resolved(project, _env(HOME=str(home)), [])
        assert ours == theirs and ours[0] == "engine"
    finally:
        (project / "profiles.yml").unlink()
