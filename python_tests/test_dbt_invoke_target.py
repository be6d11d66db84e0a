"""A dbt command that a ``spark-cdc`` command runs goes to that command's target and profiles
folder, not the profile's default (the stream's monitoring refresh on a team's own profile)."""

from __future__ import annotations

from typing import ClassVar

import pytest

from spark_cdc.cli import dbt_invoke

pytestmark = pytest.mark.unit


class _Recorder:
    calls: ClassVar[list[list[str]]] = []

    def __init__(self, callbacks=None) -> None:
        pass

    def invoke(self, args: list[str]):
        _Recorder.calls.append(list(args))
        return type("Result", (), {"success": True, "exception": None})()


def test_the_command_s_target_and_profiles_folder_reach_dbt(monkeypatch, tmp_path):
    import dbt.cli.main

    monkeypatch.setattr(dbt.cli.main, "dbtRunner", _Recorder)
    monkeypatch.setenv("DBT_PROFILES_DIR", str(tmp_path))  # what --profiles-dir sets
    _Recorder.calls.clear()
    dbt_invoke.run_dbt(["run", "--select", "x"], project_dir=tmp_path, target="engine")
    dbt_invoke.run_dbt(["parse"], project_dir=tmp_path)
    first, second = _Recorder.calls
    assert first[first.index("--target") + 1] == "engine"
    assert first[first.index("--profiles-dir") + 1] == str(tmp_path)
    assert "--target" not in second  # no target named: the profile's default
