"""The generators run without tqdm (it is the optional ``generators`` extra)."""

from __future__ import annotations

import sys

from spark_cdc.generators.progress import iterate, progress


def test_without_tqdm_the_items_and_counts_are_kept(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    assert list(iterate(range(4), "events", "ev", show=True)) == [0, 1, 2, 3]
    with progress(10, "rows", "rows", show=True) as bar:
        bar.update(3)
        bar.update(4)
    assert (bar.total, bar.n) == (10, 7)


def test_with_tqdm_a_bar_is_shown_only_when_asked(capsys):
    assert list(iterate(range(3), "events", "ev", show=True)) == [0, 1, 2]
    assert "events" in capsys.readouterr().err
    assert list(iterate(range(3), "events", "ev", show=False)) == [0, 1, 2]
    assert capsys.readouterr().err == ""
