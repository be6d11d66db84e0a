"""The snapshot generic data tests fail on hand-made broken tables, and pass on a sound one."""

from __future__ import annotations

import pytest
from support import copy_project, dbt_invoker

HIGH = "timestamp'9999-12-31 23:59:59'"
COLUMNS = (
    "id int, name string, dbt_scd_id string, dbt_updated_at timestamp, dbt_valid_from timestamp, "
    "dbt_valid_to timestamp, dbt_insert_process_id string, dbt_inserted_at timestamp, "
    "dbt_close_process_id string, dbt_closed_at timestamp, dbt_valid_to_high timestamp"
)


def _ts(day: int | None) -> str:
    return "null" if day is None else f"timestamp'2026-01-0{day} 00:00:00'"


def _row(
    key: int,
    name: str,
    start: int,
    end: int | None,
    *,
    high: str | None = None,
    insert_id: str | None = "'run-a'",
    close_id: str | None = None,
) -> str:
    """A snapshot row; by default consistent (high end, close id set exactly when closed)."""
    closed = end is not None
    high_value = high or (_ts(end) if closed else HIGH)
    close_value = close_id or ("'run-b'" if closed else "null")
    closed_at = _ts(end) if closed else "null"
    return (
        f"({key}, '{name}', '{key}-{start}', {_ts(start)}, {_ts(start)}, {_ts(end)}, "
        f"{insert_id or 'null'}, {_ts(start)}, {close_value}, {closed_at}, {high_value})"
    )


TABLES = {
    # A sound history: key 1 changed once, key 2 never.
    "good": [_row(1, "a", 1, 2), _row(1, "b", 2, None), _row(2, "x", 1, None)],
    "two_open": [_row(1, "a", 1, None), _row(1, "b", 2, None)],
    "overlap": [_row(1, "a", 1, 3), _row(1, "b", 2, None)],
    "inverted": [_row(1, "a", 3, 2), _row(1, "b", 3, None)],
    "high_end_wrong": [_row(1, "a", 1, 2, high=HIGH), _row(1, "b", 2, None, high="null")],
    "process_ids_missing": [
        _row(1, "a", 1, 2, close_id="null"),
        _row(1, "b", 2, None, insert_id=None),
    ],
    "phantom": [_row(1, "a", 1, 2), _row(1, "a", 2, None)],
}

TESTS = {
    "two_open": "snapshot_one_open_row_per_key",
    "overlap": "snapshot_windows_do_not_overlap",
    "inverted": "snapshot_valid_to_not_before_valid_from",
    "high_end_wrong": "snapshot_high_end_on_open_rows",
    "process_ids_missing": "snapshot_process_ids_set",
    "phantom": "snapshot_no_phantom_versions",
}
NEEDS_KEY = {"snapshot_one_open_row_per_key", "snapshot_windows_do_not_overlap"}
NEEDS_KEY.add("snapshot_no_phantom_versions")


def _test_entry(test: str) -> str:
    if test in NEEDS_KEY:
        return f"          - {test}:\n              arguments: {{unique_key: id}}\n"
    return f"          - {test}\n"


def _sources_yml() -> str:
    lines = [
        "version: 2",
        "sources:",
        "  - name: broken",
        "    schema: broken_snapshots",
        "    tables:",
    ]
    text = "\n".join(lines) + "\n"
    text += "      - name: good\n        data_tests:\n"
    text += "".join(_test_entry(test) for test in TESTS.values())
    for table, test in TESTS.items():
        text += f"      - name: {table}\n        data_tests:\n" + _test_entry(test)
    return text


@pytest.fixture(scope="module")
def results(spark, tmp_path_factory) -> dict[str, list]:
    spark.sql("create schema if not exists broken_snapshots")
    for table, rows in TABLES.items():
        spark.sql(f"drop table if exists broken_snapshots.{table}")
        spark.sql(f"create table broken_snapshots.{table} ({COLUMNS}) using delta")
        spark.sql(f"insert into broken_snapshots.{table} values {', '.join(rows)}")
    project = copy_project(tmp_path_factory.mktemp("generic") / "spark_cdc")
    (project / "models" / "broken_snapshots.yml").write_text(_sources_yml())
    outcome = dbt_invoker(project)("test", "--select", "source:broken", expect_success=False)
    by_table: dict[str, list] = {}
    for result in outcome.result.results:
        if result.node.resource_type != "test":
            continue  # the project's on-run-start hook
        table = next(t for t in TABLES if f"_broken_{t}_" in result.node.name + "_")
        by_table.setdefault(table, []).append(result)
    return by_table


def test_every_generic_test_passes_on_a_sound_history(results):
    statuses = sorted((r.node.name, str(r.status)) for r in results["good"])
    assert len(statuses) == len(TESTS)
    assert {status for _, status in statuses} == {"pass"}


@pytest.mark.parametrize("table", sorted(TESTS))
def test_generic_test_fails_on_its_broken_table(results, table):
    (result,) = results[table]
    assert result.node.name.startswith(f"source_{TESTS[table]}_broken_{table}")
    assert str(result.status) == "fail", result.message
    assert result.failures >= 1
