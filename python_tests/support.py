"""What many test files share: the project's folders, a dbt invoker, the text of a dbt result,
and the environment and run of a command in a process of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from spark_cdc_dev import project_copies

PROJECT_DIR = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# The README, then the docs pages in the order the README lists them (the order their command
# blocks run in).
DOC_PAGES = [
    PROJECT_DIR / "README.md",
    *(
        PROJECT_DIR / "docs" / f"{name}.md"
        for name in (
            "architecture",
            "targets-and-engine",
            "snapshots",
            "use-in-your-project",
            "configuration",
            "change-events",
            "hash-cdc",
            "schema-drift",
            "bad-input-and-recovery",
            "generators",
            "benchmarks",
            "development",
        )
    ),
]


def module_schema(test_file: str) -> str:
    """The schema a test module's tables live in (the profile's schema while it runs, set by
    conftest.py): one per module, so that no module finds another's tables."""
    return "t_" + Path(test_file).stem.removeprefix("test_")


def docs_text() -> str:
    """The README and every docs page, one after the other."""
    return "\n".join(page.read_text() for page in DOC_PAGES)


def copy_project(destination: Path) -> Path:
    """Copy the dbt project (without local state) so a test can run and change it freely."""
    return project_copies.copy_project(destination, PROJECT_DIR)


def dbt_invoker(project: Path) -> Callable:
    """A function running ``dbt <args>`` in-process on ``project``; raises when it fails
    (unless ``expect_success=False``)."""
    from spark_cdc.cli.dbt_invoke import run_dbt

    def invoke(*args: str, expect_success: bool = True, callbacks: Sequence[Callable] = ()):
        return run_dbt(
            list(args),
            project_dir=project,
            profiles_dir=project / "profiles",
            expect_success=expect_success,
            callbacks=callbacks,
        )

    return invoke


class SqlStatements(list):
    """The SQL statements dbt runs, collected as a dbtRunner callback (``callbacks=[this]``)."""

    def __call__(self, event: Any) -> None:
        if event.info.name == "SQLQuery":
            self.append(event.data.sql)


def messages(result: Any) -> str:
    """The messages of the nodes of a dbt result, joined (empty when it has none)."""
    rows = getattr(getattr(result, "result", None), "results", None) or []
    return " ".join(str(row.message) for row in rows if row.message)


def command_env(
    home: Path | None = None,
    *,
    drop: Iterable[str] = ("SPARK_CDC_",),
    profiles: Path | None = PROJECT_DIR / "profiles",
    **extra: str,
) -> dict[str, str]:
    """This process's environment for a command of its own: variables starting with a ``drop``
    prefix removed, ``SPARK_CDC_HOME`` (when given), ``DBT_PROFILES_DIR`` (unless None), the
    virtualenv's bin first on PATH, then ``extra``."""
    prefixes = tuple(drop)
    env = {key: value for key, value in os.environ.items() if not key.startswith(prefixes)}
    if home is not None:
        env["SPARK_CDC_HOME"] = str(home)
    if profiles is not None:
        env["DBT_PROFILES_DIR"] = str(profiles)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def run_command(
    command: list[str], env: dict[str, str], cwd: Path = PROJECT_DIR, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run ``command`` to its end (text output captured, no exception on failure)."""
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def table_digests(spark: Any, schema: str, *prefixes: str) -> dict[str, tuple[int, str]]:
    """(row count, hash of the sorted rows) of every Delta table of ``schema`` whose name starts
    with one of ``prefixes``: a rerun that changes nothing leaves them all equal, process ids
    included."""
    from spark_cdc_dev.table_state import digest

    names = sorted(
        f"{schema}.{t.name}"
        for t in spark.catalog.listTables(schema)
        if t.name.startswith(prefixes) and not t.isTemporary and t.tableType != "VIEW"
    )
    return {name: digest(spark, name) for name in names}


def canonical_name(name: str) -> str:
    """A Python distribution's name as pip compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def constraint_pins(constraints: Path) -> dict[str, str]:
    """The ``name==version`` lines of a constraints file, by canonical name."""
    pins = {}
    for line in constraints.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonical_name(name)] = version.strip()
    return pins


def run_with_commit_metadata(spark: Any, metadata: dict, statement: str) -> None:
    """Run ``statement`` with Delta's commit ``userMetadata`` set to ``metadata`` (JSON), as a
    run that marks its progress does; the session setting is cleared after it."""
    import json

    from spark_cdc.change_events.progress import USER_METADATA

    spark.conf.set(USER_METADATA, json.dumps(metadata))
    try:
        spark.sql(statement)
    finally:
        spark.conf.unset(USER_METADATA)
