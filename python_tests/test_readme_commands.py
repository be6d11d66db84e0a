"""Every command of the marked blocks of the README and docs pages, run exactly as written, in
document order.

A block marked ``<!-- readme-test: NAME -->`` is run line by line (a ``\\`` continues a line):
the words are split as a shell would split them (``$NAME`` expanded), ``dbt ...`` runs in this
process (dbtRunner, on the shared session) and ``spark-cdc ...`` through the command line's own
entry point. A command followed by ``# fails: TEXT`` must fail with TEXT in its message. The
commands run from a copy of the project whose ``.spark_cdc`` is this test process's
SPARK_CDC_HOME, as "Commands by hand" sets it up.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from support import DOC_PAGES, copy_project, messages

from spark_cdc.cli.dbt_invoke import run_dbt
from spark_cdc.cli.main import main as spark_cdc
from spark_cdc_dev.main_job import (
    DEFAULT_SCHEMA,
    EXAMPLE_SNAPSHOTS,
    change_event_tables,
    hash_cdc_tables,
)

# The commands name the default schema, as a reader's run of them does (conftest.py).
PROFILE_SCHEMA = DEFAULT_SCHEMA
MARKER = re.compile(r"<!-- readme-test: ([\w-]+) -->\s*```bash\n(.*?)```", re.DOTALL)


def readme_blocks(pages: list[Path] = DOC_PAGES) -> list[tuple[str, list[str]]]:
    """(name, command lines) of each marked block, in document order."""
    blocks = []
    for name, body in MARKER.findall("\n".join(page.read_text() for page in pages)):
        lines = body.replace("\\\n", " ").splitlines()
        blocks.append((name, [line.strip() for line in lines if line.strip()]))
    return blocks


BLOCKS = readme_blocks()


@pytest.fixture(scope="module")
def workdir(spark, spark_home, tmp_path_factory):
    """A project copy to run from, its .spark_cdc being this process's home; demo tables gone."""
    project = copy_project(tmp_path_factory.mktemp("readme") / "spark_cdc")
    (project / ".spark_cdc").symlink_to(spark_home)
    for table in (*hash_cdc_tables(PROFILE_SCHEMA), *change_event_tables(PROFILE_SCHEMA)):
        spark.sql(f"drop table if exists {table}")
    for name in (*EXAMPLE_SNAPSHOTS, "customers_snapshot"):
        spark.sql(f"drop table if exists {PROFILE_SCHEMA}.{name}")
    before = Path.cwd()
    os.chdir(project)
    previous = os.environ.get("DBT_PROFILES_DIR")
    os.environ["DBT_PROFILES_DIR"] = str(project / "profiles")
    yield project
    os.chdir(before)
    if previous is None:
        os.environ.pop("DBT_PROFILES_DIR", None)
    else:
        os.environ["DBT_PROFILES_DIR"] = previous


def _run(line: str, project: Path, capsys) -> tuple[bool, str]:
    command = line.partition("  # ")[0]
    words = [os.path.expandvars(word) for word in shlex.split(command)]
    if words[0] == "dbt":
        result = run_dbt(words[1:], project_dir=project, expect_success=False)
        return result.success, messages(result) + str(result.exception or "")
    if words[0] == "spark-cdc":
        code = spark_cdc(words[1:])
        out = capsys.readouterr()
        return code == 0, out.out + out.err
    raise AssertionError(f"a README command this test cannot run: {line}")


def test_the_readme_has_marked_blocks():
    names = [name for name, _ in BLOCKS]
    assert {"hash-cdc-dates", "recover-snapshot", "recover-hash-cdc", "generators"} <= set(names)
    assert all(lines for _, lines in BLOCKS)


@pytest.mark.parametrize(("name", "lines"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_readme_block(name, lines, workdir, capsys):
    for line in lines:
        if line.startswith("#"):
            continue
        expected_failure = re.search(r"# fails: (.+)$", line)
        succeeded, output = _run(line, workdir, capsys)
        if expected_failure:
            assert not succeeded, f"{name}: expected to fail: {line}"
            assert expected_failure.group(1).strip() in output, f"{name}: {line}\n{output[-2000:]}"
        else:
            assert succeeded, f"{name}: {line}\n{output[-3000:]}"
