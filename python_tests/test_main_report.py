"""The main job's closing table, formatted from a run's steps (no Spark)."""

from __future__ import annotations

import re

from spark_cdc_dev.main_report import summary_table

# Steps as the job records them: titles of main_job.py, times chosen for the test.
CAPTURED = [
    ("reset", 1.9),
    ("dbt seed", 9.4),
    ("snapshots, source day 1", 14.2),
    ("hash CDC, effective date 2026-01-01", 31.5),
    ("change events: delivery 1 of both sources, dbt build", 40.3),
    ("dbt build (day 3 again: snapshots find no change, hash CDC re-applies its last date)", 52.0),
    ("dbt docs generate", 12.8),
]


def test_one_row_per_step_in_order_then_the_total():
    lines = summary_table(CAPTURED)
    rows = lines[2:-2]
    assert len(rows) == len(CAPTURED)
    for (title, seconds), row in zip(CAPTURED, rows, strict=True):
        shown, _, number = row.rstrip().rpartition(" ")
        assert title.startswith(shown.strip().rstrip("…"))
        assert float(number) == seconds
    assert lines[-1].split()[0] == "total"
    assert float(lines[-1].split()[-1]) == round(1.9 + 9.4 + 14.2 + 31.5 + 40.3 + 52.0 + 12.8, 1)


def test_plain_text_under_100_columns():
    lines = summary_table(CAPTURED)
    assert all(len(line) < 100 for line in lines)
    assert not any(re.search(r"\x1b\[", line) for line in lines)
    # The long title is cut, not wrapped.
    assert any(line.startswith("dbt build (day 3 again") and "…" in line for line in lines)


def test_dbt_is_quiet_and_logs_under_the_home_unless_verbose(tmp_path, monkeypatch):
    from spark_cdc_dev.main_job import dbt_options

    monkeypatch.setenv("SPARK_CDC_HOME", str(tmp_path))
    quiet = dbt_options(verbose=False, terminal=False)
    assert quiet == ["--log-path", str(tmp_path / "logs"), "--quiet", "--no-use-colors"]
    assert dbt_options(verbose=True, terminal=True) == ["--log-path", str(tmp_path / "logs")]
