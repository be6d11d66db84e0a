"""Table maintenance of snapshot tables: every `snapshot_optimize_every` merging runs a run ends
with OPTIMIZE (then REORG ... APPLY (PURGE) and VACUUM when configured); runs that merge nothing
never count and never maintain; the table's rows are the same before and after. Checked on the
table's Delta history, its files and deletion vectors (Delta's `describe detail` and the file
actions of its log) and its rows (expected rows written out here)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from support import PROJECT_DIR, dbt_invoker, module_schema

from spark_cdc_dev.project_copies import snapshot_variant

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

SOURCES_YML = """
version: 2
sources:
  - name: maintained
    schema: maintained_src
    tables:
      - name: people
"""

SNAPSHOTS_YML = """
snapshots:
  - name: mt_every_two
    relation: source('maintained', 'people')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: invalidate
      snapshot_optimize_every: 2
      snapshot_purge_deletion_vectors: true
      snapshot_vacuum_retain_hours: 168
      snapshot_deletion_vectors_min_mb: 0
  - name: mt_default
    relation: source('maintained', 'people')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: invalidate
      snapshot_deletion_vectors_min_mb: 0
"""

T0, T1, T2, T3 = (dt.datetime(2026, 1, day, 8, 0) for day in (1, 2, 3, 4))
PEOPLE = "id int, name string, updated_at timestamp"
NAMES = ("mt_every_two", "mt_default")
DUE_CHECK = f"describe history {MODULE_SCHEMA}_maintained.mt_every_two limit 14"
MAINTENANCE = ("OPTIMIZE", "REORG", "VACUUM START", "VACUUM END")


@pytest.fixture(scope="module")
def dbt(spark, tmp_path_factory):
    spark.sql("create schema if not exists maintained_src")
    files = {
        "models/maintained_sources.yml": SOURCES_YML,
        "snapshots/maintained.yml": SNAPSHOTS_YML,
    }
    base = tmp_path_factory.mktemp("maintained")
    return dbt_invoker(snapshot_variant(base / "project", "maintained", files, False, PROJECT_DIR))


def _source(spark, rows: list[tuple]) -> None:
    frame = spark.createDataFrame(rows, PEOPLE)
    frame.write.format("delta").mode("overwrite").saveAsTable("maintained_src.people")


def _operations(spark, name: str) -> list[str]:
    """The table's Delta operations, oldest first."""
    history = spark.sql(f"describe history {MODULE_SCHEMA}_maintained.{name}").collect()
    return [row["operation"] for row in sorted(history, key=lambda row: row["version"])]


def _rows(spark, name: str, version: int | None = None) -> list[tuple]:
    table = f"{MODULE_SCHEMA}_maintained.{name}"
    if version is not None:
        table += f" version as of {version}"
    selected = spark.sql(f"select id, name, updated_at, dbt_valid_to from {table}").collect()
    return sorted(tuple(row) for row in selected)


def _deletion_vector_files(spark, name: str) -> int:
    """Data files of the current version that carry a deletion vector, replayed here from the
    table's commit files (a file is identified by its path and its deletion vector)."""
    location = spark.sql(f"describe detail {MODULE_SCHEMA}_maintained.{name}").first()["location"]
    log = Path(location.removeprefix("file:")) / "_delta_log"
    live: dict[tuple, dict] = {}
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            for kind in ("add", "remove"):
                if kind in action:
                    dv = action[kind].get("deletionVector") or {}
                    key = (action[kind]["path"], dv.get("pathOrInlineDv"), dv.get("offset"))
                    if kind == "add":
                        live[key] = action[kind]
                    else:
                        live.pop(key, None)
    return sum(1 for add in live.values() if add.get("deletionVector"))


def _merges_and_maintenance(spark, name: str) -> list[str]:
    return [op for op in _operations(spark, name) if op == "MERGE" or op in MAINTENANCE]


def _snapshot(dbt) -> str:
    """Run the snapshots; the SQL dbt ran (one statement a line, lower case, dbt's query
    comment left out)."""
    statements: list[str] = []

    def collect(event) -> None:
        if event.info.name == "SQLQuery":
            sql = re.sub(r"^/\*.*?\*/", "", event.data.sql.strip(), flags=re.DOTALL)
            statements.append(" ".join(sql.lower().split()))

    dbt("snapshot", "--select", *NAMES, callbacks=[collect])
    return "\n".join(statements)


def _maintenance_statements(sql: str) -> list[str]:
    starts = ("optimize ", "reorg table ", "vacuum ")
    return [line for line in sql.splitlines() if line.startswith(starts)]


def test_every_second_merging_run_optimizes_purges_and_vacuums_with_the_same_rows(spark, dbt):
    _source(spark, [(1, "a", T0), (2, "b", T0), (3, "c", T0), (4, "d", T0)])
    assert _maintenance_statements(_snapshot(dbt)) == []

    # Merge 1: not due anywhere.
    _source(spark, [(1, "a2", T1), (2, "b", T0), (3, "c", T0), (4, "d", T0)])
    sql = _snapshot(dbt)
    assert _maintenance_statements(sql) == [] and DUE_CHECK in sql
    for name in NAMES:
        assert _merges_and_maintenance(spark, name) == ["MERGE"]

    # A run that merges nothing does not count, nor even read the history to see.
    sql = _snapshot(dbt)
    assert _maintenance_statements(sql) == [] and DUE_CHECK not in sql
    for name in NAMES:
        assert _merges_and_maintenance(spark, name) == ["MERGE"]

    # Merge 2: due for mt_every_two only, which ends its run with OPTIMIZE, REORG and VACUUM.
    _source(spark, [(1, "a2", T1), (2, "b2", T2), (3, "c", T0)])
    target = f"{MODULE_SCHEMA}_maintained.mt_every_two"
    assert _maintenance_statements(_snapshot(dbt)) == [
        f"optimize {target}",
        f"reorg table {target} apply (purge)",
        f"vacuum {target} retain 168 hours",
    ]
    operations = _operations(spark, "mt_every_two")
    assert _merges_and_maintenance(spark, "mt_every_two")[:3] == ["MERGE", "MERGE", "OPTIMIZE"]
    merged = max(version for version, op in enumerate(operations) if op == "MERGE")
    expected = [
        (1, "a", T0, T1),
        (1, "a2", T1, None),
        (2, "b", T0, T2),
        (2, "b2", T2, None),
        (3, "c", T0, None),
    ]
    for name in NAMES:
        rows = _rows(spark, name)
        # key 4 was deleted: closed at the run's time, not a fixed one
        closed_4 = [row for row in rows if row[0] == 4]
        assert len(closed_4) == 1 and closed_4[0][3] is not None
        assert [row for row in rows if row[0] != 4] == expected
    assert _rows(spark, "mt_every_two") == _rows(spark, "mt_every_two", merged)
    assert _merges_and_maintenance(spark, "mt_default") == ["MERGE", "MERGE"]

    # The maintained table is one file with no deletion vector; the others keep theirs.
    maintained = spark.sql(f"describe detail {target}").first()
    assert maintained["numFiles"] == 1
    assert _deletion_vector_files(spark, "mt_every_two") == 0
    assert _deletion_vector_files(spark, "mt_default") > 0
    assert (
        spark.sql(f"describe detail {MODULE_SCHEMA}_maintained.mt_default").first()["numFiles"] > 1
    )

    # Merge 3: the count started again at the OPTIMIZE: no maintenance.
    _source(spark, [(1, "a3", T3), (2, "b2", T2), (3, "c", T0)])
    assert _maintenance_statements(_snapshot(dbt)) == []
    assert _operations(spark, "mt_every_two")[-1] == "MERGE"
