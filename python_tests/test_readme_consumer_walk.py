"""The consumer-project walk (docs/use-in-your-project.md), run exactly as written with bash,
from a copy of this project with nothing set up (no virtualenv, nothing built): the team's
project is created beside it with a virtualenv of its own holding its dbt, pip builds spark_cdc
from the copy into it, and every package is held at the lowest version spark_cdc's ranges allow
(``PIP_CONSTRAINT=constraints/lowest.txt``): installing spark_cdc keeps the team's dbt, and
everything runs from the installed package on the low end of every range.

Then again with the team's dbt at 1.12.0 (the walk's one line that installs the team's dbt
names 1.12.0 and the parser wheel it installs with; the rest as pip resolves it): the
wheel keeps that dbt too, and the walk runs on dbt 1.12's behaviour flags.

On the warm engine, the schema-drift stream runs beside a build of the same feed with the team's
own profile; both end with rc 0, and every landed line is taken in once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import (
    canonical_name,
    command_env,
    constraint_pins,
    copy_project,
    docs_text,
    run_command,
)

from spark_cdc.engine import server as engine

MARKER = re.compile(r"<!-- readme-consumer-walk -->\s*```bash\n(.*?)```", re.DOTALL)
TEAMS_DBT = 'pip install "dbt-core==1.11.2" "dbt-spark==1.11.0"'
DBT_1_12 = (
    'pip install "dbt-core==1.12.0" "dbt-core-experimental-parser==2.0.0a4" "dbt-spark==1.11.0"'
)


def _installed(venv: Path) -> dict[str, str]:
    """Every distribution installed in ``venv``, by canonical name."""
    done = run_command(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        command_env(),
        cwd=venv,
    )
    return {canonical_name(p["name"]): p["version"] for p in json.loads(done.stdout)}


# The walk at the lowest versions is in `make test-compat` (dbt 1.11 is the whole suite's in CI);
# the walk on dbt 1.12.0 is in `make test` (CI's only run of 1.12).
@pytest.mark.parametrize("teams_dbt", [pytest.param("lowest", marks=pytest.mark.compat), "1.12.0"])
def test_the_consumer_walk_runs_as_written(tmp_path, teams_dbt):
    (block,) = MARKER.findall(docs_text())
    assert TEAMS_DBT in block
    checkout = copy_project(tmp_path / "spark_cdc")
    env = command_env(drop=("SPARK_CDC_", "DBT_", "PYSPARK_", "VIRTUAL_ENV"), profiles=None)
    if teams_dbt == "1.12.0":  # the team's own environment: what pip resolves around it
        block = block.replace(TEAMS_DBT, DBT_1_12)
    else:
        env["PIP_CONSTRAINT"] = str(checkout / "constraints" / "lowest.txt")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    team = tmp_path / "team_lake"
    # Below the test's own timeout (pyproject.toml): the walk's output is then reported.
    try:
        done = run_command(
            ["bash", "-euo", "pipefail", "-c", block], env, cwd=checkout, timeout=1100
        )
    finally:  # a walk that stopped part-way leaves no engine running
        engine.stop(team / ".spark_cdc")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    # What pip built holds the library's packages and leaves the project's own tools out.
    (site_packages,) = (team / ".venv" / "lib").glob("python3*/site-packages")
    for package in ("core", "session", "engine", "cli", "change_events", "dbt_models"):
        assert (site_packages / "spark_cdc" / package / "__init__.py").is_file(), package
    assert not (site_packages / "spark_cdc_dev").exists()
    assert not (checkout / "dist").exists()
    installed = _installed(team / ".venv")
    if teams_dbt == "1.12.0":  # the team's dbt was kept
        assert installed["dbt-core"] == "1.12.0", installed
        assert "Running with dbt=1.12.0" in done.stdout
    else:  # the team's dbt was kept, and every package sits at the lowest version allowed
        lowest = constraint_pins(checkout / "constraints" / "lowest.txt")
        assert {name: installed.get(name) for name in lowest} == lowest
    # spark_cdc itself runs from the wheel, not from a checkout.
    origin = run_command(
        [
            str(team / ".venv" / "bin" / "python"),
            "-c",
            "import spark_cdc; print(spark_cdc.__file__)",
        ],
        env,
        cwd=team,
    )
    assert origin.stdout.strip().startswith(str(team / ".venv")), origin.stdout
    manifest = json.loads((team / "target" / "manifest.json").read_text())
    assert {n["package_name"] for n in manifest["nodes"].values()} == {"team_lake"}
    results = json.loads((team / "target" / "run_results.json").read_text())
    # Every node built or tested; an exposure (nothing to run) is reported as a no-op.
    assert results["results"] and all(
        r["status"] in ("success", "pass")
        or (r["unique_id"].startswith("exposure.") and r["status"] == "no-op")
        for r in results["results"]
    )
    assert any(r["unique_id"].startswith("model.") for r in results["results"])
    # The feed's landing folder has a freshness (its files' time) that dbt reads without a
    # warning at parse (dbt 1.11.2 warned for loaded_at_query), and the files are fresh.
    assert "does not support metadata-based freshness" not in done.stdout, done.stdout[-3000:]
    assert re.search(r"PASS freshness of schema_drift__telemetry\.raw_events", done.stdout)
    # The delta extract that says its deletes (a dataset whose name starts with the change-event
    # source's): account 1 deleted (its values kept on the tombstone), 2 not in the second
    # extract and so unchanged, 3 updated, 4 inserted.
    current = done.stdout[done.stdout.index("account_no,limit_eur,operation,eff_start_date") :]
    assert current.splitlines()[1:5] == [
        "1,100.00,D,2026-01-02",
        "2,250.50,I,2026-01-01",
        "3,80.00,U,2026-01-02",
        "4,10.00,I,2026-01-02",
    ], current[:500]
    expected = (team / "data" / "accounts" / "expected_state.jsonl").read_text().splitlines()
    live = re.search(r"^live_accounts\n(\d+)$", done.stdout, re.MULTILINE)
    assert live and int(live.group(1)) == len(expected) > 0, done.stdout[-2000:]
    # The stream and a build of the feed at once on the engine (the stream's own dbt runs on the
    # command's target and the team's profile): every landed line reached bronze once, and each
    # is in a silver table or the quarantine, once.
    landed = team / ".spark_cdc" / "landing" / "schema_drift" / "telemetry"
    lines = sum(1 for path in landed.glob("batch_*/*.jsonl") for _ in path.open())
    assert lines == 500, lines
    counts = done.stdout[done.stdout.index("bronze,silver_or_quarantined") :].splitlines()
    assert counts[1] == f"{lines},{lines}", counts[:2]
    # The team's own snapshot, on Delta, keeps the seed's decimal(12,2) prices; both rows open.
    snapshot = done.stdout[done.stdout.index("plan_id,price,dbt_valid_to") :]
    assert snapshot.splitlines()[1:3] == ["1,19.90,", "2,5.00,"], snapshot[:300]
