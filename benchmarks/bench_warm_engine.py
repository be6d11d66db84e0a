"""Plain-CLI dbt commands on the cold embedded runtime vs the warm local engine, same run.

Two homes prepared alike (seed, the customer snapshots, day 1). Per repetition, in alternating
order: ``dbt build -s customers_by_segment`` and ``dbt snapshot`` as plain ``dbt`` processes on
target ``local`` (each pays a JVM, Delta and the Derby metastore) and on target ``engine`` (a
Spark Connect client of the home's running engine). The engine's own start and the first
client's warm-up are reported apart (paid once, not per command). While the cold commands run,
the engine is idle (no client): one Spark JVM works at a time.

Usage: ``python benchmarks/bench_warm_engine.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results, timed_subprocess

from spark_cdc import engine

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
COMMANDS = {
    "build_customers_by_segment": ["build", "--select", "customers_by_segment"],
    "snapshot": ["snapshot"],
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


def _dbt(home: Path, target: str, args: list[str]) -> float:
    """Wall seconds of one plain ``dbt`` command (its own target path, so partial parsing
    works across repetitions as it does for a user)."""
    command = [str(BIN / "dbt"), *args, "--target-path", str(home / f"target_{target}")]
    return timed_subprocess(command, _env(home, target), PROJECT)


def _prepare(home: Path) -> None:
    for args in (["seed"], ["run", "--select", "stg_customer_states"], ["snapshot"]):
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
        for attempt in range(args.repeat):
            order = ("cold", "warm") if attempt % 2 == 0 else ("warm", "cold")
            for name, command in COMMANDS.items():
                for kind in order:
                    if kind == "cold":
                        engine.stop(warm_home)  # one Spark JVM at a time
                        seconds = _dbt(cold_home, "local", command)
                    else:
                        if engine.status(warm_home) is None:
                            engine.start(warm_home, "connect")
                            _dbt(warm_home, "engine", ["run", "--select", "stg_customer_states"])
                        seconds = _dbt(warm_home, "engine", command)
                    runs[name][kind].append(seconds)
                    print(f"run {attempt + 1} {name} {kind}: {seconds:.1f} s")
    finally:
        engine.stop(warm_home)
        shutil.rmtree(work, ignore_errors=True)

    report: dict = {"engine_start_s": engine_start_s, "first_client_s": first_client_s}
    print(f"\n{'command':<28}{'cold (local)':>14}{'warm (engine)':>15}{'warm/cold':>11}")
    for name, kinds in runs.items():
        cold, warm = statistics.median(kinds["cold"]), statistics.median(kinds["warm"])
        report[name] = {"cold_s": cold, "warm_s": warm, "ratio": warm / cold, "runs": kinds}
        print(f"{name:<28}{cold:>12.1f} s{warm:>13.1f} s{warm / cold:>10.2f}x")
    save_results("warm_engine", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
