"""integration_tests/: a separate dbt project that installs spark_cdc as a package (the
dbt-utils pattern) and snapshots its own seed over day 1 -> day 2 -> day 3 with spark_cdc's
overrides (found through its dispatch order), generic tests and guard rails; none of the demo's
nodes enter its graph."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from support import copy_project, dbt_invoker, messages

from spark_cdc.cli.dbt_invoke import last_invocation_id

# The integration project's own profile schema, as its users run it (conftest.py).
SCHEMA = PROFILE_SCHEMA = "spark_cdc_integration_tests"
HIGH = dt.datetime(9999, 12, 31, 23, 59, 59)


@pytest.fixture(scope="module")
def integration_project(spark, tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("integration") / "spark_cdc")
    return project / "integration_tests"


def _dbt(project: Path, *args: str, expect_success: bool = True):
    return dbt_invoker(project)(*args, expect_success=expect_success)


@pytest.fixture(scope="module")
def days(spark, integration_project) -> dict[int, str]:
    """dbt build of each day (seed, staging view, both snapshots, every test): process ids."""
    spark.sql(f"drop schema if exists {SCHEMA} cascade")
    _dbt(integration_project, "deps")
    runs = {}
    for day in (1, 2, 3):
        _dbt(integration_project, "build", "--vars", json.dumps({"integration_day": day}))
        runs[day] = last_invocation_id()
    return runs


def _versions(spark, snapshot: str) -> dict[int, list[dict]]:
    rows = spark.sql(f"select * from {SCHEMA}.{snapshot}").collect()
    by_key: dict[int, list[dict]] = {}
    for row in sorted(rows, key=lambda r: (r.account_id, r.dbt_valid_from)):
        by_key.setdefault(row.account_id, []).append(row.asDict())
    return by_key


def test_only_the_consuming_projects_nodes_are_in_its_graph(integration_project, days):
    manifest = json.loads((integration_project / "target" / "manifest.json").read_text())
    packages = {node["package_name"] for node in manifest["nodes"].values()}
    assert packages == {"spark_cdc_integration_tests"}
    tests = [n for n in manifest["nodes"].values() if n["resource_type"] == "test"]
    generic = {n["test_metadata"]["namespace"] for n in tests if n.get("test_metadata")}
    assert "spark_cdc" in generic  # the package's generic tests, called as spark_cdc.<name>


def test_timestamp_snapshot_metadata_over_three_days(spark, days):
    versions = _versions(spark, "accounts_timestamp")
    one, two, three = days[1], days[2], days[3]
    assert [len(versions[k]) for k in (1, 2, 3, 4, 5)] == [2, 2, 2, 1, 1]
    # account 1: a new plan on day 2 closes the day-1 version at the new version's time
    old, new = versions[1]
    assert (old["dbt_insert_process_id"], old["dbt_close_process_id"]) == (one, two)
    assert old["dbt_valid_to"] == dt.datetime(2026, 3, 2, 9) == new["dbt_valid_from"]
    assert old["dbt_valid_to_high"] == old["dbt_valid_to"] and old["dbt_closed_at"] is not None
    assert new["dbt_insert_process_id"] == two and new["dbt_close_process_id"] is None
    assert new["dbt_valid_to"] is None and new["dbt_valid_to_high"] == HIGH
    # account 2: deleted on day 2 (closed by that run), back on day 3
    gone, back = versions[2]
    assert gone["dbt_close_process_id"] == two and gone["dbt_valid_to"] is not None
    assert back["dbt_insert_process_id"] == three and back["plan"] == "team"
    # account 3 changes on day 3; account 4 never changes; account 5 arrives on day 2
    assert versions[3][0]["dbt_close_process_id"] == three
    assert versions[4][0]["dbt_insert_process_id"] == one
    assert versions[4][0]["dbt_valid_to_high"] == HIGH
    assert versions[5][0]["dbt_insert_process_id"] == two


def test_check_snapshot_records_the_deletion(spark, days):
    versions = _versions(spark, "accounts_check")
    kept, deletion, back = versions[2]
    assert kept["dbt_close_process_id"] == days[2] and kept["dbt_is_deleted"] == "False"
    assert deletion["dbt_is_deleted"] == "True" and deletion["dbt_insert_process_id"] == days[2]
    assert deletion["dbt_close_process_id"] == days[3] and deletion["owner"] == "Ben"
    assert back["dbt_insert_process_id"] == days[3] and back["dbt_valid_to_high"] == HIGH


def test_the_packages_guard_rails_apply(spark, integration_project, days):
    before = spark.sql(f"select * from {SCHEMA}.accounts_timestamp").collect()
    # an empty day: with hard deletes, closing every open row is refused
    _dbt(integration_project, "run", "--vars", json.dumps({"integration_day": 4}))
    empty = _dbt(
        integration_project,
        "snapshot",
        "--vars",
        json.dumps({"integration_day": 4}),
        expect_success=False,
    )
    assert not empty.success
    said = messages(empty)
    assert "returned no rows" in said and "nothing was written" in said
    # a bad high end date: refused before any node runs
    bad = _dbt(
        integration_project,
        "snapshot",
        "--vars",
        json.dumps({"integration_day": 3, "default_high_dttm": "2020-02-30 00:00:00"}),
        expect_success=False,
    )
    assert not bad.success and "default_high_dttm" in str(bad.exception)
    after = spark.sql(f"select * from {SCHEMA}.accounts_timestamp").collect()
    assert sorted(map(tuple, after)) == sorted(map(tuple, before))
