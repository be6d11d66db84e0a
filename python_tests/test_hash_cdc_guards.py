"""Hash CDC on bad input through dbt: refusals write nothing, quarantined rows hold their keys,
malformed lines never delete, and the mass-delete guard (each a finding of the reliability
review, checked against the day-2 state of generated extracts)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from support import messages, module_schema

from spark_cdc.generators.extracts import article_example, generate_extracts
from spark_cdc_dev.table_state import versions

DAY1, DAY2 = "2019-06-18", "2019-06-19"
SELECT = ["--select", "stg_hash_cdc__synthetic+"]
SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)
CURRENT = f"{SCHEMA}.hash_cdc__synthetic_current"
OUTPUTS = (
    CURRENT,
    f"{SCHEMA}.hash_cdc__synthetic_history",
    f"{SCHEMA}.hash_cdc__synthetic_quarantine",
    f"{SCHEMA}.hash_cdc__synthetic_run_summary",
    f"{SCHEMA}_restricted.hash_cdc__synthetic_sensitive",
)
STAGING = f"{SCHEMA}.stg_hash_cdc__synthetic"


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("guard_landing")
    spec = article_example((root / "synthetic" / DAY1, root / "synthetic" / DAY2), seed=11)
    generate_extracts(spec, show_progress=False)
    return root


def _build(dbt, landing: Path, date: str, expect_success: bool = True, **extra):
    variables = {"hash_cdc_effective_date": date, "hash_cdc_landing_root": str(landing), **extra}
    return dbt("build", *SELECT, "--vars", json.dumps(variables), expect_success=expect_success)


def _current(spark) -> dict[str, tuple]:
    rows = spark.table(CURRENT).select("key_hash", "operation", "eff_start_date", "nonkey_hash")
    return {r.key_hash: tuple(r) for r in rows.collect()}


def _summary(spark, date: str) -> dict:
    rows = spark.sql(
        f"select * from {SCHEMA}.hash_cdc__synthetic_run_summary where eff_date = '{date}'"
    ).collect()
    assert len(rows) == 1
    return rows[0].asDict()


@pytest.fixture(scope="module")
def day_two(spark, dbt, landing) -> dict[str, tuple]:
    """Day 1 then day 2 applied from empty tables; the current state after day 2."""
    for table in (*OUTPUTS, STAGING):
        spark.sql(f"drop table if exists {table}")
    _build(dbt, landing, DAY1)
    _build(dbt, landing, DAY2)
    return _current(spark)


@pytest.fixture(scope="module")
def day_two_versions(spark, day_two) -> dict[str, int]:
    """Each output's and the staging table's Delta version holding the day-2 state."""
    return {table: version for table, version in versions(spark, (*OUTPUTS, STAGING)).items()}


@pytest.fixture
def at_day_two(spark, day_two, day_two_versions):
    """The tables in their day-2 state before the test: a table that a test changed since is
    restored to its day-2 version (Delta RESTORE; a forced re-run of day 2 through dbt is
    covered in test_hash_cdc_dbt), and the restore's own version becomes the day-2 one."""
    for table, version in versions(spark, day_two_versions).items():
        if version != day_two_versions[table]:
            spark.sql(f"restore table {table} to version as of {day_two_versions[table]}")
            day_two_versions[table] = versions(spark, [table])[table]
    assert _current(spark) == day_two


def _extract(landing: Path, date: str, header: list[str], rows: list[list[str]]) -> None:
    folder = landing / "synthetic" / date
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with (folder / "part-00000.csv").open("w", newline="") as target:
        csv.writer(target).writerows([header, *rows])


def _day_two_rows(landing: Path) -> tuple[list[str], list[list[str]]]:
    with (landing / "synthetic" / DAY2 / "part-00000.csv").open() as source:
        rows = list(csv.reader(source))
    return rows[0], rows[1:]


def test_a_header_only_or_empty_full_extract_is_refused_and_writes_nothing(
    spark, dbt, landing, day_two, at_day_two
):
    header, _ = _day_two_rows(landing)
    before = versions(spark, OUTPUTS)
    _extract(landing, "2019-06-20", header, [])
    refused = _build(dbt, landing, "2019-06-20", expect_success=False)
    assert not refused.success
    assert "the full extract has zero rows" in messages(refused)
    assert versions(spark, OUTPUTS) == before
    # A file of zero bytes is the same case, with the same answer.
    folder = landing / "synthetic" / "2019-06-21"
    folder.mkdir()
    (folder / "part-00000.csv").write_bytes(b"")
    refused = _build(dbt, landing, "2019-06-21", expect_success=False)
    assert "the full extract has zero rows" in messages(refused)
    assert versions(spark, OUTPUTS) == before
    assert _current(spark) == day_two


def test_a_mass_delete_above_the_fraction_is_refused_naming_the_counts(
    spark, dbt, landing, day_two, at_day_two
):
    header, rows = _day_two_rows(landing)
    kept = rows[: len(rows) * 4 // 10]  # 60% of the live keys missing (max_delete_fraction 0.5)
    _extract(landing, "2019-06-23", header, kept)
    before = versions(spark, OUTPUTS)
    refused = _build(dbt, landing, "2019-06-23", expect_success=False)
    message = messages(refused)
    assert "would delete 6,000 of 10,000 live keys (60.0%, above max_delete_fraction 0.5" in message
    assert "hash_cdc_allow_mass_delete: true" in message
    assert versions(spark, OUTPUTS) == before


def test_a_refused_older_date_writes_nothing_anywhere(spark, dbt, landing, day_two, at_day_two):
    before = versions(spark, (*OUTPUTS, STAGING))
    refused = _build(dbt, landing, DAY1, expect_success=False)
    assert "is older than the latest applied date 2019-06-19; nothing was written" in messages(
        refused
    )
    assert versions(spark, (*OUTPUTS, STAGING)) == before


def test_a_zero_row_extract_goes_through_only_when_allowed(
    spark, dbt, landing, day_two, at_day_two
):
    header, _ = _day_two_rows(landing)
    _extract(landing, "2019-06-22", header, [])
    _build(dbt, landing, "2019-06-22", hash_cdc_allow_mass_delete=True)
    summary = _summary(spark, "2019-06-22")
    live = sum(1 for row in day_two.values() if row[1] != "D")
    assert summary["deleted"] == live == summary["live_keys_before"]
    assert summary["delete_fraction"] == 1.0 and summary["mass_delete_allowed"] is True


def test_quarantined_rows_hold_their_keys_instead_of_deleting_them(
    spark, dbt, landing, day_two, at_day_two
):
    header, rows = _day_two_rows(landing)
    attr_1 = header.index("attr_1")
    bad = [list(row) for row in rows[:4]]
    for row in bad:
        row[attr_1] = "not-a-number"
    duplicated = rows[4]
    _extract(landing, "2019-06-24", header, [*bad, duplicated, duplicated, *rows[5:]])
    _build(dbt, landing, "2019-06-24")
    after = _current(spark)
    quarantine = spark.sql(
        f"select key_hash, quarantine_reason from {SCHEMA}.hash_cdc__synthetic_quarantine "
        "where eff_date = '2019-06-24'"
    ).collect()
    held = {r.key_hash for r in quarantine}
    assert sorted(r.quarantine_reason for r in quarantine) == [
        *["cast_failed:attr_1"] * 4,
        *["duplicate_key"] * 2,
    ]
    assert len(held) == 5
    # Each held key keeps its day-2 row exactly: operation, date and values.
    for key_hash in held:
        assert after[key_hash] == day_two[key_hash]
    summary = _summary(spark, "2019-06-24")
    assert summary["deleted"] == 0 and summary["held_keys"] == 5
    assert summary["rows_in"] == len(rows) + 1
    assert summary["rows_in"] == summary["valid_rows"] + summary["quarantined_rows"]


def test_lines_with_wrong_field_counts_are_quarantined_and_delete_nothing(
    spark, dbt, landing, day_two, at_day_two
):
    header, rows = _day_two_rows(landing)
    short, long = rows[0][:-1], [*rows[1], "extra"]
    _extract(landing, "2019-06-25", header, [short, long, *rows[2:5000]])
    _build(dbt, landing, "2019-06-25")
    reasons = spark.sql(
        f"select quarantine_reason, raw_record, key_hash "
        f"from {SCHEMA}.hash_cdc__synthetic_quarantine where eff_date = '2019-06-25'"
    ).collect()
    assert sorted(r.quarantine_reason for r in reasons) == ["column_count_mismatch"] * 2
    assert {r.raw_record for r in reasons} == {",".join(short), ",".join(long)}
    assert all(r.key_hash is None for r in reasons)
    summary = _summary(spark, "2019-06-25")
    # Lines whose key cannot be read might be any missing key: nothing is deleted this run.
    assert summary["deleted"] == 0 and summary["unidentified_rows"] == 2
    live_before = sum(1 for row in day_two.values() if row[1] != "D")
    assert summary["deletes_deferred"] == live_before - 4998
    after = _current(spark)
    assert {k for k, row in after.items() if row[1] != "D"} == {
        k for k, row in day_two.items() if row[1] != "D"
    }
