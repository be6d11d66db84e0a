"""The README and the docs pages as a reader meets them: a short README that links every page,
links that lead somewhere, and every command block either run as written by a test or saying,
in a marker, why not. Blocks marked ``docs-bash-test`` run here, with bash, from a copy of the
project with its own home (their commands set up their own environment)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support import DOC_PAGES, PROJECT_DIR, command_env, copy_project, run_command

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
MARKERS = re.compile(
    r"<!-- (readme-test: [\w-]+|readme-engine-test|readme-consumer-walk"
    r"|docs-bash-test: [\w-]+|readme-not-run: \S.*?) -->$"
)
COMMAND_LANGUAGES = {"bash", "sh", "shell", "console", ""}
LINK = re.compile(r"\]\(([^)\s]+)\)")
BASH_TEST = re.compile(r"<!-- docs-bash-test: ([\w-]+) -->\s*```bash\n(.*?)```", re.DOTALL)


def _blocks(page: Path) -> list[tuple[str, str, str]]:
    """(language, marker line before it, body) of each fenced block of a page."""
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        found.append((match.group(1), before, match.group(2)))
    return found


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_links_every_docs_page():
    readme = (PROJECT_DIR / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    pages = sorted((PROJECT_DIR / "docs").glob("*.md"))
    assert pages and set(pages) == set(DOC_PAGES[1:])
    for page in pages:
        assert f"](docs/{page.name})" in readme, page.name


@pytest.mark.parametrize("page", DOC_PAGES, ids=[page.name for page in DOC_PAGES])
def test_every_command_block_is_run_by_a_test_or_says_why_not(page):
    for language, before, body in _blocks(page):
        if language in COMMAND_LANGUAGES:
            assert language, f"{page.name}: a block without a language: {body[:80]!r}"
            assert MARKERS.search(before), f"{page.name}: an unmarked command block: {body[:80]!r}"


@pytest.mark.parametrize("page", DOC_PAGES, ids=[page.name for page in DOC_PAGES])
def test_every_relative_link_leads_to_a_file_and_heading(page):
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}"
        if anchor:
            assert anchor in _anchors(linked), f"{page.name}: {target}"


BASH_BLOCKS = [block for page in DOC_PAGES for block in BASH_TEST.findall(page.read_text())]


@pytest.mark.parametrize(("name", "block"), BASH_BLOCKS, ids=[name for name, _ in BASH_BLOCKS])
def test_bash_block_runs_as_written(name, block, tmp_path):
    checkout = copy_project(tmp_path / "spark_cdc")
    (checkout / ".venv").symlink_to(Path(sys.executable).parents[1])
    env = command_env(drop=("SPARK_CDC_", "DBT_", "PYSPARK_"), profiles=None)
    done = run_command(["bash", "-euo", "pipefail", "-c", block], env, cwd=checkout, timeout=900)
    assert done.returncode == 0, f"{name}\n" + done.stdout[-4000:] + done.stderr[-4000:]
    assert "Completed successfully" in done.stdout, done.stdout[-2000:]


def _table(text: str, heading: str) -> list[str]:
    """The rows of the first table under ``heading``, links reduced to their text."""
    section = text[text.index(heading) :].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", row) for row in rows]


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def test_the_readme_and_benchmarks_tables_are_the_results_file():
    readme = (PROJECT_DIR / "README.md").read_text()
    benchmarks = (PROJECT_DIR / "docs" / "benchmarks.md").read_text()
    results = json.loads((PROJECT_DIR / "benchmarks" / "results" / "at_a_glance.json").read_text())
    expected = [
        [r["capability"], r["case"], r["project"], r["peer"], r["ratio"], r["goal"], r["measured"]]
        for r in results["rows"]
    ]
    glance = _table(benchmarks, "## At a glance")
    assert len(expected) >= 10
    assert [_cells(row) for row in glance[2:]] == expected
    assert _table(readme, "## Performance") == glance
    # Each figure's section names the command that reproduces it and the date it was measured.
    sections = {
        heading: body
        for heading, body in re.findall(r"(?ms)^## (.+?)\n(.*?)(?=^## |\Z)", benchmarks)
    }
    for row in results["rows"]:
        page, _, anchor = row["link"].partition("#")
        if page != "benchmarks.md":
            continue
        (body,) = [
            b
            for h, b in sections.items()
            if re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") == anchor
        ]
        script = row["command"].split()[1]
        assert script in body, (anchor, script)
        assert row["measured"].split(",")[0] in body, (anchor, row["measured"])


def test_the_benchmarks_page_holds_todays_figures_only():
    assert len((PROJECT_DIR / "docs" / "benchmarks.md").read_text().splitlines()) <= 210
