"""Plain-CLI dbt commands on the cold embedded runtime vs the warm local engine, same run.

Two homes prepared alike (seed, the customer snapshots, day 1). Per repetition, in alternating
order: ``dbt build -s customers_by_segment`` and ``dbt snapshot`` as plain ``dbt`` processes on
target ``local`` (each pays a JVM, Delta and the Derby metastore) and on target ``engine`` (a
Spark Connect client of the home's running engine). The engine's own start and the first
client's warm-up are reported apart (paid once, not per command). The engine keeps running, as
a daemon does: while the cold commands run it is idle (no client), so one Spark JVM works at a
time. Every command runs with four threads on both targets.

Each command also gets its phases from dbt's own JSON log (``--log-format-file json``): start-up
(process start to dbt's first line: imports), parse (to the node count), connect (to the first
node: the session, the relation cache, the on-run-start hooks), nodes (first node start to last
node end; the slowest node named) and finish (artifacts, to the process's end), and the peak
resident memory of its process tree (dbt, and on the cold side its Spark JVM); the engine JVM's
own peak (VmHWM) is read before it stops.

Usage: ``python benchmarks/bench_warm_engine.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import process_peak_rss_mib, save_results, timed_subprocess_peak

from spark_cdc.engine import server as engine

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# Four threads on both sides (the engine target's default; the embedded one defaults to one).
COMMANDS = {
    "build_customers_by_segment": ["build", "--select", "customers_by_segment", "--threads", "4"],
    "snapshot": ["snapshot", "--threads", "4"],
}


def _env(home: Path, target: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_CDC_HOME=str(home),
        SPARK_CDC_TARGET=target,
        DBT_PROFILES_DIR=str(PROJECT / "profiles"),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


PHASES = ("startup", "parse", "connect", "nodes", "finish")


def _dbt(home: Path, target: str, args: list[str]) -> float:
    """Wall seconds of one plain ``dbt`` command (its own target path, so partial parsing
    works across repetitions as it does for a user); its phases in ``LAST_PHASES``."""
    logs = home / "bench_logs"
    shutil.rmtree(logs, ignore_errors=True)
    command = [
        str(BIN / "dbt"),
        "--log-path",
        str(logs),
        "--log-format-file",
        "json",
        "--log-level-file",
        "debug",
        *args,
        "--target-path",
        str(home / f"target_{target}"),
    ]
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    seconds, peak = timed_subprocess_peak(command, _env(home, target), PROJECT)
    LAST_PHASES.clear()
    LAST_PHASES.update(_phases(logs / "dbt.log", started, seconds))
    LAST_PHASES["peak_rss_mib"] = peak
    return seconds


LAST_PHASES: dict = {}


def _phases(log: Path, started: dt.datetime, seconds: float) -> dict:
    """Seconds per phase of one dbt command, from its JSON log (see the module's docstring)."""
    events: dict[str, list[dt.datetime]] = {}
    slowest = ("", 0.0)
    for line in log.read_text().splitlines():
        event = json.loads(line)
        name = event["info"]["name"]
        moment = dt.datetime.fromisoformat(event["info"]["ts"].rstrip("Z"))
        events.setdefault(name, []).append(moment)
        node = event.get("data", {}).get("node_info") or {}
        if name == "NodeFinished" and node.get("node_started_at"):
            took = (
                dt.datetime.fromisoformat(node["node_finished_at"])
                - dt.datetime.fromisoformat(node["node_started_at"])
            ).total_seconds()
            if took > slowest[1]:
                slowest = (node.get("node_name", ""), took)
    marks = [
        started,
        events["MainReportVersion"][0],
        events["FoundStats"][0],
        events["NodeStart"][0],
        events["NodeFinished"][-1],
        started + dt.timedelta(seconds=seconds),
    ]
    out = {phase: (marks[i + 1] - marks[i]).total_seconds() for i, phase in enumerate(PHASES)}
    return {**out, "slowest_node": slowest[0], "slowest_node_s": slowest[1]}


def _prepare(home: Path) -> None:
    for args in (
        ["seed"],
        ["run", "--select", "stg_customers", "stg_customer_states"],
        ["snapshot"],
    ):
        _dbt(home, "local", args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command per target")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench_warm_engine_"))
    cold_home, warm_home = work / "cold", work / "warm"
    try:
        for home in (cold_home, warm_home):
            _prepare(home)
        started = time.perf_counter()
        engine.start(warm_home, "connect")
        engine_start_s = time.perf_counter() - started
        first_client_s = _dbt(warm_home, "engine", ["run", "--select", "stg_customer_states"])
        print(f"engine start {engine_start_s:.1f} s, first client (warm-up) {first_client_s:.1f} s")
        runs: dict[str, dict[str, list[float]]] = {
            name: {"cold": [], "warm": []} for name in COMMANDS
        }
        phases: dict[str, dict[str, list[dict]]] = {
            name: {"cold": [], "warm": []} for name in COMMANDS
        }
        for attempt in range(args.repeat):
            order = ("cold", "warm") if attempt % 2 == 0 else ("warm", "cold")
            for name, command in COMMANDS.items():
                for kind in order:
                    if kind == "cold":  # the engine waits, idle, as a daemon does
                        seconds = _dbt(cold_home, "local", command)
                    else:
                        seconds = _dbt(warm_home, "engine", command)
                    runs[name][kind].append(seconds)
                    phases[name][kind].append(dict(LAST_PHASES))
                    split = " ".join(f"{p} {LAST_PHASES[p]:.1f}" for p in PHASES)
                    print(f"run {attempt + 1} {name} {kind}: {seconds:.1f} s ({split})")
        engine_peak = process_peak_rss_mib(int(engine.status(warm_home)["server_pid"]))
    finally:
        engine.stop(warm_home)
        shutil.rmtree(work, ignore_errors=True)

    report: dict = {
        "engine_start_s": engine_start_s,
        "first_client_s": first_client_s,
        "engine_jvm_peak_rss_mib": engine_peak,
    }
    print(f"engine JVM peak resident memory {engine_peak:,.0f} MiB")
    print(f"\n{'command':<28}{'cold (local)':>14}{'warm (engine)':>15}{'warm/cold':>11}")
    for name, kinds in runs.items():
        cold, warm = statistics.median(kinds["cold"]), statistics.median(kinds["warm"])
        split = {
            kind: {p: statistics.median(r[p] for r in phases[name][kind]) for p in PHASES}
            for kind in ("cold", "warm")
        }
        peaks = {kind: max(r["peak_rss_mib"] for r in phases[name][kind]) for kind in split}
        report[name] = {
            "cold_s": cold,
            "warm_s": warm,
            "ratio": warm / cold,
            "runs": kinds,
            "phase_medians_s": split,
            # the command's process tree: dbt and, cold, its Spark JVM; warm, dbt alone
            "peak_rss_mib": peaks,
            "phases": phases[name],
        }
        print(
            f"{name:<28}{cold:>12.1f} s{warm:>13.1f} s{warm / cold:>10.2f}x"
            f"   peak MiB cold {peaks['cold']:,.0f}, warm client {peaks['warm']:,.0f}"
        )
    print(f"\n{'median phase (s)':<28}" + "".join(f"{p:>9}" for p in PHASES))
    for name in runs:
        for kind in ("cold", "warm"):
            values = report[name]["phase_medians_s"][kind]
            print(f"{name + ' ' + kind:<28}" + "".join(f"{values[p]:>9.1f}" for p in PHASES))
    save_results("warm_engine", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
