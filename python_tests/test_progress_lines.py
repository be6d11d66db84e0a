"""Long command steps say what they do when they start and, while they run, that they still do."""

from __future__ import annotations

import time

import pytest

from spark_cdc.core.progress_lines import interval, step


def test_a_step_says_it_starts_and_that_it_is_still_working(monkeypatch, capsys):
    monkeypatch.setenv("SPARK_CDC_PROGRESS_SECONDS", "0.05")
    with step("landing 3 batch files into landing.t"):
        time.sleep(0.4)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "spark-cdc: landing 3 batch files into landing.t ..."
    assert len(lines) >= 3, lines
    assert all(
        line.startswith("spark-cdc: landing 3 batch files into landing.t: still working (")
        and line.endswith(" s)")
        for line in lines[1:]
    ), lines


def test_a_quick_step_says_only_that_it_starts(monkeypatch, capsys):
    monkeypatch.setenv("SPARK_CDC_PROGRESS_SECONDS", "30")
    with step("starting Spark (target local)"):
        pass
    assert capsys.readouterr().err == "spark-cdc: starting Spark (target local) ...\n"


@pytest.mark.parametrize(("setting", "seconds"), [("2.5", 2.5), ("0", 30.0), ("x", 30.0)])
def test_the_interval_is_the_setting_or_30_seconds(monkeypatch, setting, seconds):
    monkeypatch.setenv("SPARK_CDC_PROGRESS_SECONDS", setting)
    assert interval() == seconds
