"""Kill a dbt run with SIGKILL at chosen points, then check that nothing is lost and that a rerun
converges to what an uninterrupted run gives. A script, not a test (it takes about an hour).

For each capability (snapshots, hash CDC, change events, schema drift):

1. prepare a SPARK_CDC_HOME up to the run under test (generated data, the earlier days built)
   and keep a copy of it;
2. run the command under test uninterrupted: the reference digests of every output table;
3. for each kill point (a dbt node and a delay after its START line): restore the copy, run the
   command, SIGKILL its whole process group (Python and the Spark JVM) at the point, check that
   every table still reads (at its last committed Delta version), rerun the command, and compare
   every table with the reference (columns that record when or by which run something happened
   are left out of the comparison: RUN_METADATA).

With ``--at commits`` the kill points are the run's own Delta commits instead: the reference
run's commits are listed from the tables' ``_delta_log`` folders (every data write, and every
``ALTER TABLE`` of ``on_schema_change`` or of a discovered column), and each run under test is
killed as soon as its k-th commit file appears, for every k (before the next commit: each
result says which commit the kill landed after).

Usage: ``.venv/bin/python scripts/kill_and_rerun.py [--only hash_cdc] [--work /tmp/kills]
[--target engine] [--kills N] [--at commits] [--first K]``. Each result is also appended to
``<work>/<capability>/kills.jsonl`` as it comes; ``--first K`` resumes at kill point K and
keeps the earlier results of the points before it. With ``--target engine`` every command is a
client of the home's warm engine: the client is killed, the engine must survive it, and the
rerun goes through the same engine. Prints one line per kill and a summary table; writes
benchmarks/results/kill_and_rerun_<target>.json (a capability's earlier results replaced,
the others kept).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
# The commands run from a copy of the project taken at the start (main), so that editing the
# working tree while the script runs cannot change what it measures.
RUN_FROM = {"project": PROJECT}
# local: each command its own process, killed with its JVM; engine: each command a client of
# the home's warm engine, the client killed, the engine left running (--target engine).
TARGET = {"name": "local"}
# --at commits: kill at every commit of the run under test (at most ``limit``)
AT: dict = {"commits": False, "limit": None, "first": 1}
# The results file (set by main): written after every kill point, so a stopped run keeps them.
OUT: dict = {"path": None}
BIN = Path(sys.executable).parent
START = re.compile(r"\d+ of \d+ START .*?\b\w+\.(\w+) ")

# Columns that record when, or by which run, something happened: a rerun after a kill differs
# from the reference run there by construction.
RUN_METADATA = [
    "process_id",
    "load_id",
    "ingested_at",
    "_ingested_at",
    "registered_at",
    "loaded_at",
    "first_seen_at",
    "last_seen_at",
    "dbt_scd_id",
    "dbt_updated_at",
    "dbt_insert_process_id",
    "dbt_inserted_at",
    "dbt_close_process_id",
    "dbt_closed_at",
    # customers_check_cols_renamed's dbt meta columns, renamed (snapshot_meta_column_names)
    "version_id",
    "version_updated_at",
]
# Validity windows are compared: a time the run took from its own clock (a check-strategy
# snapshot's new versions, an invalidated hard delete) is compared as one marker, every other
# time (from the data, or from the runs before the one under test) exactly.
VALIDITY = ["dbt_valid_from", "dbt_valid_to", "dbt_valid_to_high", "valid_from", "valid_to"]


NAMES = ("snapshots", "hash_cdc", "change_events", "schema_drift")


@dataclass
class Capability:
    """How to prepare a home, the command under test, its output tables and kill points."""

    name: str
    prepare: list[list[str]]
    command: list[str]
    tables: list[str]
    kill_points: list[tuple[str, float]]
    results: list[dict] = field(default_factory=list)


def _dbt(*args: str) -> list[str]:
    return [str(BIN / "dbt"), *args]


def _cli(*args: str) -> list[str]:
    return [str(BIN / "spark-cdc"), *args]


def capabilities(work: Path) -> list[Capability]:
    """The four capabilities with their preparation, command and kill points (each works in
    its own home, ``<work>/<capability>/home``)."""
    landing = {name: work / name / "home" / "landing" for name in NAMES}
    data = {name: work / name / "home" / "generated" for name in NAMES}
    snapshots = [
        "customers_ts_ignore",
        "customers_ts_invalidate",
        "customers_ts_new_record",
        "customers_check_all",
        "customers_check_cols_renamed",
        "customers_composite_key",
    ]
    day = lambda n: json.dumps({"source_day": n})  # noqa: E731
    date = lambda d: json.dumps({"hash_cdc_effective_date": d})  # noqa: E731
    change_models = ["stg_change_events__customers+", "stg_change_events__customers_initial+"]
    drift_root = landing["schema_drift"] / "schema_drift" / "events"
    return [
        Capability(
            "snapshots",
            [
                _dbt("seed", "--select", "customer_states"),
                _dbt("run", "--select", "stg_customer_states", "--vars", day(1)),
                _dbt("snapshot", "--select", *snapshots, "--vars", day(1)),
                _dbt("run", "--select", "stg_customer_states", "--vars", day(2)),
            ],
            _dbt("snapshot", "--select", *snapshots, "--vars", day(2)),
            [f"spark_cdc.{name}" for name in snapshots],
            [(name, delay) for name in snapshots[1::2] for delay in (0.5, 2.0)],
        ),
        Capability(
            "hash_cdc",
            [
                _cli(
                    "generate-extracts",
                    "200000",
                    "200000",
                    "5",
                    "10",
                    "0.2",
                    "0.4",
                    "0.4",
                    str(landing["hash_cdc"] / "synthetic" / "2019-06-18"),
                    str(landing["hash_cdc"] / "synthetic" / "2019-06-19"),
                    "--no-progress",
                ),
                _dbt("build", "--select", "stg_hash_cdc__synthetic+", "--vars", date("2019-06-18")),
            ],
            _dbt("build", "--select", "stg_hash_cdc__synthetic+", "--vars", date("2019-06-19")),
            [
                "spark_cdc.hash_cdc__synthetic_current",
                "spark_cdc.hash_cdc__synthetic_history",
                "spark_cdc.hash_cdc__synthetic_quarantine",
                "spark_cdc.hash_cdc__synthetic_run_summary",
                "spark_cdc_restricted.hash_cdc__synthetic_sensitive",
            ],
            [
                ("stg_hash_cdc__synthetic", 2.0),
                ("hash_cdc__synthetic_current", 2.0),
                ("hash_cdc__synthetic_current", 6.0),
                ("hash_cdc__synthetic_history", 1.0),
                ("hash_cdc__synthetic_quarantine", 0.5),
                ("hash_cdc__synthetic_run_summary", 0.5),
                ("hash_cdc__synthetic_sensitive", 1.0),
            ],
        ),
        Capability(
            "change_events",
            [
                _cli(
                    "generate-change-events",
                    str(data["change_events"] / "stream"),
                    "--events",
                    "60000",
                    "--batches",
                    "6",
                    "--no-progress",
                ),
                _cli(
                    "land-change-events",
                    str(data["change_events"] / "stream"),
                    "--table",
                    "landing.customers_change_events",
                    "--batches",
                    "0:3",
                    "--initial-table",
                    "landing.customers_initial_rows",
                ),
                _dbt("build", "--select", *change_models),
                _cli(
                    "land-change-events",
                    str(data["change_events"] / "stream"),
                    "--table",
                    "landing.customers_change_events",
                    "--batches",
                    "3:6",
                ),
                # one more batch whose events bring a column (customers evolves its columns):
                # the run under test ALTERs the history and current tables before it writes
                _write_batch(data["change_events"] / "tier" / "batches" / "batch-00000.jsonl"),
                _cli(
                    "land-change-events",
                    str(data["change_events"] / "tier"),
                    "--table",
                    "landing.customers_change_events",
                ),
            ],
            _dbt("build", "--select", *change_models),
            [
                "spark_cdc.int_change_events__customers_ledger",
                "spark_cdc.change_events__customers_history",
                "spark_cdc.change_events__customers_current",
                "spark_cdc.change_events__customers_quarantine",
                "spark_cdc.change_events__customers_run_summary",
            ],
            [
                ("int_change_events__customers_ledger", 1.0),
                ("int_change_events__customers_ledger", 4.0),
                ("change_events__customers_history", 2.0),
                ("change_events__customers_history", 6.0),
                ("change_events__customers_current", 1.0),
                ("change_events__customers_quarantine", 0.5),
                ("change_events__customers_run_summary", 0.5),
            ],
        ),
        Capability(
            "schema_drift",
            [
                _cli(
                    "generate-json-events",
                    str(data["schema_drift"] / "json"),
                    "--events",
                    "40000",
                    "--event-types",
                    "12",
                    "--batches",
                    "2",
                    "--no-progress",
                ),
                [
                    "cp",
                    "-r",
                    str(data["schema_drift"] / "json" / "batch_0001"),
                    str(drift_root / "batch_0001"),
                ],
                _dbt("build", "--select", "stg_schema_drift__events+"),
                [
                    "cp",
                    "-r",
                    str(data["schema_drift"] / "json" / "batch_0002"),
                    str(drift_root / "batch_0002"),
                ],
            ],
            _dbt("build", "--select", "stg_schema_drift__events+"),
            [
                "spark_cdc.int_schema_drift__events_bronze",
                "spark_cdc.schema_drift__events_registry",
                "spark_cdc.schema_drift__events_silver_loads",
                "spark_cdc.schema_drift__events_quarantine",
                "spark_cdc.schema_drift__events_run_summary",
                "spark_cdc.schema_drift_silver__events__*",
            ],
            [
                # the silver writes first: --kills N takes the first N points
                ("schema_drift__events_silver_loads", 2.0),
                ("schema_drift__events_silver_loads", 5.0),
                ("schema_drift__events_silver_loads", 9.0),
                ("int_schema_drift__events_bronze", 1.0),
                ("int_schema_drift__events_bronze", 3.0),
                ("schema_drift__events_registry", 2.0),
                ("schema_drift__events_run_summary", 0.5),
            ],
        ),
    ]


TIER_EVENTS = [
    {"change_type": "insert", "event_ts": f"2026-03-01 00:00:0{n}", "event_seq": n,
     "column_names": ["id", "name", "amount", "tier"],
     "column_values": [str(900_000 + n), f"tiered-{n}", str(n), "gold"]}
    for n in range(3)
]  # fmt: skip


def _write_batch(path: Path) -> list[str]:
    """A command that writes the change events TIER_EVENTS as one batch file at ``path``."""
    lines = "\n".join(json.dumps(event) for event in TIER_EVENTS) + "\n"
    code = (
        "import sys, pathlib; p = pathlib.Path(sys.argv[1]); "
        "p.parent.mkdir(parents=True, exist_ok=True); p.write_text(sys.argv[2])"
    )
    return [str(BIN / "python"), "-c", code, str(path), lines]


def _commit_files(home: Path) -> dict[Path, float]:
    """Every Delta commit file under the home's warehouse, with its modification time."""
    return {
        path: path.stat().st_mtime
        for path in (home / "warehouse").glob("**/_delta_log/*.json")
        if path.stem.isdigit()
    }


def _operation(commit: Path) -> str:
    """The operation a commit file records (its commitInfo)."""
    for line in commit.read_text().splitlines():
        info = json.loads(line).get("commitInfo")
        if info:
            return str(info.get("operation"))
    return "?"


def _run_commits(home: Path, before: dict[Path, float]) -> list[Path]:
    """The commit files a run added (relative to the home), in the order it wrote them."""
    after = _commit_files(home)
    new = sorted((mtime, path) for path, mtime in after.items() if path not in before)
    return [path.relative_to(home) for _, path in new]


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_CDC_TARGET=TARGET["name"],
        SPARK_CDC_HOME=str(home),
        DBT_PROFILES_DIR=str(RUN_FROM["project"] / "profiles"),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def _run(command: list[str], home: Path) -> None:
    (home / "landing" / "schema_drift" / "events").mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        command, cwd=RUN_FROM["project"], env=_env(home), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )


def _start(command: list[str], home: Path, output: int) -> subprocess.Popen:
    """Start ``command`` in a process group of its own (killed whole), its output (with
    stderr) to ``output``: PIPE to read it as text, DEVNULL to drop it."""
    return subprocess.Popen(
        command,
        cwd=RUN_FROM["project"],
        env=_env(home),
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _run_and_kill(command: list[str], home: Path, node: str, delay: float) -> dict:
    """Run ``command``; SIGKILL its process group ``delay`` s after ``node`` STARTs."""
    process = _start(command, home, subprocess.PIPE)
    killed = {"at": None}

    def kill_later() -> None:
        time.sleep(delay)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            killed["at"] = f"{node} +{delay:g}s"

    timer = None
    for line in process.stdout:
        match = START.search(line)
        if match and match.group(1) == node and timer is None:
            timer = threading.Thread(target=kill_later)
            timer.start()
    process.wait()
    if timer is not None:
        timer.join()
    return {"killed": killed["at"] is not None, "returncode": process.returncode}


def _run_and_kill_at_commit(command: list[str], home: Path, commit: Path) -> dict:
    """Run ``command``; SIGKILL its process group as soon as the commit file ``commit``
    (relative to the home) exists."""
    target = home / commit
    process = _start(command, home, subprocess.DEVNULL)
    killed = False
    while process.poll() is None:
        if target.exists():
            os.killpg(process.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.005)
    process.wait()
    return {"killed": killed, "returncode": process.returncode}


def _digests(home: Path, tables: list[str], run_since: str) -> dict:
    command = [
        str(BIN / "python"),
        "-m",
        "spark_cdc_dev.table_state",
        *tables,
        "--exclude",
        ",".join(RUN_METADATA),
        "--run-times",
        ",".join(VALIDITY),
        "--run-since",
        run_since,
    ]
    done = subprocess.run(
        command, cwd=RUN_FROM["project"], env=_env(home), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"reading the tables failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.split("DIGESTS=", 1)[1])


def _contents(digests: dict) -> dict:
    """Digests without the Delta versions (a rerun after a kill may commit more often)."""
    return {table: None if value is None else value[1:] for table, value in digests.items()}


def _release(home: Path) -> None:
    """On the engine target: stop the home's engine before its folder is copied or replaced."""
    if TARGET["name"] == "engine":
        from spark_cdc.engine import server as engine

        engine.stop(home)


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def check(capability: Capability, work: Path) -> None:
    home, base = work / capability.name / "home", work / capability.name / "base"
    shutil.rmtree(work / capability.name, ignore_errors=True)
    home.mkdir(parents=True)
    started = time.perf_counter()
    for step in capability.prepare:
        _run(step, home)
    _release(home)
    shutil.copytree(home, base, symlinks=True)
    since = _now()
    before = _commit_files(home)
    _run(capability.command, home)
    commits = _run_commits(home, before)
    reference = _contents(_digests(home, capability.tables, since))
    if AT["commits"]:
        capability.kill_points = [(str(commit), -1.0) for commit in commits]
        if AT["limit"] is not None:
            capability.kill_points = capability.kill_points[: AT["limit"]]
    skipped = capability.kill_points[: AT["first"] - 1]
    capability.kill_points = capability.kill_points[AT["first"] - 1 :]
    print(
        f"[{capability.name}] prepared and reference run in {time.perf_counter() - started:.0f} s"
        f"{f'; kill points 1-{len(skipped)} left to an earlier run' if skipped else ''}",
        flush=True,
    )
    for node, delay in capability.kill_points:
        _release(home)
        shutil.rmtree(home)
        shutil.copytree(base, home, symlinks=True)
        since = _now()
        if delay < 0:  # a commit boundary: the commit file, relative to the home
            outcome = _run_and_kill_at_commit(capability.command, home, Path(node))
            present = [c for c in commits if (home / c).exists()]
            outcome["after_commits"] = len(present)
            outcome["operation"] = _operation(home / node)
        else:
            outcome = _run_and_kill(capability.command, home, node, delay)
        survived = True
        if TARGET["name"] == "engine":
            from spark_cdc.engine import server as engine

            survived = engine.status(home) is not None
        readable = True
        try:
            after_kill = _digests(home, capability.tables, since)
        except RuntimeError as error:
            readable, after_kill = False, str(error)
        _run(capability.command, home)
        rerun = _contents(_digests(home, capability.tables, since))
        differing = sorted(t for t in reference if reference[t] != rerun.get(t))
        point = f"{node} +{delay:g}s"
        if delay < 0:
            table = Path(node).parents[1].name
            point = (
                f"commit {commits.index(Path(node)) + 1}/{len(commits)} ({table} "
                f"{outcome['operation']}; killed after {outcome['after_commits']} commits)"
            )
        result = {
            "kill_point": point,
            "killed": outcome["killed"],
            "engine_survived": survived,
            "readable_after_kill": readable,
            "converged": not differing,
            "differing_tables": differing,
        }
        capability.results.append(result)
        state = "converged" if not differing else f"DIFFERS: {', '.join(differing)}"
        note = "" if outcome["killed"] else " (the run ended before the kill point)"
        with (work / capability.name / "kills.jsonl").open("a") as log:
            log.write(json.dumps(result) + "\n")
        _save_partial(capability, len(commits) if AT["commits"] else None)
        print(
            f"[{capability.name}] kill at {result['kill_point']}: readable={readable}, "
            f"engine survived={survived}, {state}{note}",
            flush=True,
        )
        del after_kill
    _release(home)


def _summary(capability: Capability) -> dict:
    killed = [r for r in capability.results if r["killed"]]
    return {
        "capability": capability.name,
        "kills": len(killed),
        "readable": sum(r["readable_after_kill"] for r in killed),
        "converged": sum(r["converged"] for r in killed),
        "results": capability.results,
    }


def _save_partial(capability: Capability, total: int | None) -> None:
    """The results file with this capability's kill points so far (said partial until its
    last point has run; a run stopped meanwhile resumes with ``--first``)."""
    if OUT["path"] is None:
        return
    row = _summary(capability)
    merged = _merged(OUT["path"], [row], resumed=AT["first"] > 1)
    entry = next(e for e in merged if e["capability"] == capability.name)
    done = len({r["kill_point"] for r in entry["results"]})
    entry.pop("partial", None)
    if total is not None:
        entry["kill_points_total"] = total
        if done < total:
            entry["partial"] = (
                f"kill points 1-{done} of {total} run ({_now()[:10]}); "
                f"resume with --first {done + 1}"
            )
    OUT["path"].write_text(json.dumps(merged, indent=2))


def _merged(out: Path, summary: list[dict], resumed: bool) -> list[dict]:
    """The results file with this run's capabilities replaced, the others kept, in NAMES order.
    A resumed run (``--first``) keeps the earlier results of the kill points it did not run."""
    earlier = json.loads(out.read_text()) if out.exists() else []
    by_name = {row["capability"]: row for row in earlier}
    for row in summary:
        kept = by_name.get(row["capability"], {}).get("results", []) if resumed else []
        ran = {r["kill_point"] for r in row["results"]}
        results = [r for r in kept if r["kill_point"] not in ran] + row["results"]
        killed = [r for r in results if r["killed"]]
        by_name[row["capability"]] = {
            **row,
            "kills": len(killed),
            "readable": sum(r["readable_after_kill"] for r in killed),
            "converged": sum(r["converged"] for r in killed),
            "results": results,
        }
    return [by_name[name] for name in NAMES if name in by_name]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="capability name (repeatable)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/spark_cdc_kills"))
    parser.add_argument(
        "--target",
        choices=("local", "engine"),
        default="local",
        help="run the commands embedded (local) or as clients of the home's warm engine",
    )
    parser.add_argument("--kills", type=int, default=None, help="at most N kill points each")
    parser.add_argument(
        "--first",
        type=int,
        default=1,
        help="start at kill point N (resume a run stopped part way; earlier results kept)",
    )
    parser.add_argument(
        "--at",
        choices=("times", "commits"),
        default="times",
        help="kill at delays after nodes start (times) or at every commit of the run (commits)",
    )
    args = parser.parse_args()
    TARGET["name"] = args.target
    AT.update(commits=args.at == "commits", limit=args.kills, first=args.first)
    from spark_cdc_dev.project_copies import copy_project

    shutil.rmtree(args.work / "project", ignore_errors=True)
    RUN_FROM["project"] = copy_project(args.work / "project", PROJECT)
    chosen = [c for c in capabilities(args.work) if not args.only or c.name in args.only]
    suffix = "_commits" if args.at == "commits" else ""
    out = PROJECT / "benchmarks" / "results" / f"kill_and_rerun_{args.target}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    OUT["path"] = out
    summary = []
    for capability in chosen:
        if args.kills is not None and args.at == "times":
            capability.kill_points = capability.kill_points[: args.kills]
        check(capability, args.work)
        summary.append(_summary(capability))
    merged = json.loads(out.read_text()) if out.exists() else []  # saved after each point
    out.write_text(json.dumps(merged, indent=2))
    print("\n| capability | kills | readable after the kill | converged after a rerun |")
    print("| --- | --- | --- | --- |")
    for row in merged:
        print(f"| {row['capability']} | {row['kills']} | {row['readable']} | {row['converged']} |")
    survived = all(r["engine_survived"] for row in summary for r in row["results"])
    converged = all(r["converged"] == r["kills"] == r["readable"] for r in summary)
    return 0 if converged and survived else 1


if __name__ == "__main__":
    sys.exit(main())
