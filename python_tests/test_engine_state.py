"""The engine's state is trusted only when proven: its supervisor is the very process that wrote
it (pid and creation time), one start at a time per home, the state replaced atomically."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import psutil

from spark_cdc.engine import server as engine


def _write_state(home: Path, pid: int, started: float) -> None:
    folder = home / "engine"
    folder.mkdir(parents=True, exist_ok=True)
    state = {"kind": "connect", "supervisor_pid": pid, "supervisor_started": started,
             "server_pid": pid, "port": 1, "url": "sc://localhost:1"}  # fmt: skip
    (folder / "connect.json").write_text(json.dumps(state))


def test_a_state_file_whose_pid_is_now_another_process_is_no_engine(tmp_path):
    # After a reboot or a SIGKILL the state file stays, and its pid may belong to anyone.
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _write_state(tmp_path, bystander.pid, psutil.Process(bystander.pid).create_time() - 5)
        assert engine.Engine(tmp_path).state() is None
        assert engine.status(tmp_path) is None
        assert engine.stop(tmp_path) is False
        assert bystander.poll() is None  # never signalled
    finally:
        bystander.kill()
        bystander.wait()
    _write_state(tmp_path, bystander.pid, 0.0)  # a pid that no longer runs
    assert engine.Engine(tmp_path).state() is None


def _supervisors_of(home: Path) -> list[psutil.Process]:
    """The engine supervisors running for ``home`` (``python -m ... serve HOME ...``)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = process.info["cmdline"] or []
        if "serve" in line and str(home) in line:
            found.append(process)
    return found


def test_two_cold_starts_at_once_start_one_engine(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_CDC_ENGINE_WARMUP", "0")
    home = tmp_path.resolve()
    results: list = []

    def start() -> None:
        try:
            results.append(engine.start(home, "connect", wait=300))
        except Exception as error:
            results.append(error)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert all(isinstance(r, dict) for r in results), results
        assert results[0]["supervisor_pid"] == results[1]["supervisor_pid"]
        assert [p.pid for p in _supervisors_of(home)] == [results[0]["supervisor_pid"]]
    finally:
        state = next((r for r in results if isinstance(r, dict)), None)
        assert engine.stop(home)
    assert state is not None
    assert engine.process_of(state["supervisor_pid"], state["supervisor_started"]) is None
    assert engine.Engine(home).state() is None
    assert _supervisors_of(home) == []


def test_a_bad_warm_up_setting_is_refused_before_anything_starts(tmp_path, monkeypatch, capsys):
    from spark_cdc.cli.main import main as spark_cdc

    monkeypatch.setenv("SPARK_CDC_HOME", str(tmp_path))
    for value in ("two", "-1", "1.5"):
        monkeypatch.setenv("SPARK_CDC_ENGINE_WARMUP", value)
        assert spark_cdc(["engine", "start"]) == 2
        error = capsys.readouterr().err
        assert f"SPARK_CDC_ENGINE_WARMUP={value!r}" in error
        assert "a whole number from 0 up" in error
        # Refused before the start lock: no engine folder, state, log or supervisor.
        assert not (tmp_path / "engine").exists()


TOKEN_READER = """
import sys
from pathlib import Path
from spark_cdc.engine import server as engine
print(engine.Engine(Path(sys.argv[1])).token())
"""


def test_first_readers_of_the_token_at_once_all_read_the_same_whole_token(tmp_path):
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", TOKEN_READER, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(12)
    ]
    results = [reader.communicate(timeout=60) for reader in readers]
    assert [reader.returncode for reader in readers] == [0] * 12, [err for _, err in results]
    tokens = {out.strip() for out, _ in results}
    assert len(tokens) == 1 and len(tokens.pop()) >= 40
    assert sorted(path.name for path in (tmp_path / "engine").iterdir()) == ["token"]
    assert (tmp_path / "engine" / "token").stat().st_mode & 0o777 == 0o600
