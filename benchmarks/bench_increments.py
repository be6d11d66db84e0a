"""What one increment costs as the history grows: a run should read what the increment changed,
not the table's age. Through dbt, as a user runs it, figures from Spark's own event log.

Change events (``--capability change_events``): the demo source ``customers`` at fixed live keys
(``--live-keys`` existing rows; the generator's re-inserts balance its deletes and no event
inserts a new key, so only the history grows), a history of H events (``--histories``) in
batches of I events (``--increment``), then one more batch of I events. Each batch spans about a
day of event time (a daily run: the generator's ``--max-gap-ms`` from I), so H = 100,000 is ten
days of history and 1,000,000 a hundred. Steps:

1. generate the stream, land the first H events and build the models (the full build), then
   ``dbt test`` them (unmeasured: a daily run tests every day, and a scoped test reads what
   changed since it last passed);
2. land the next batch and run the models (the increment), then ``dbt test`` the same models;
3. the floor, in the same run: what a Spark engineer writes without the project for the same
   batch: the latest event per key of the increment (one aggregate) and one Delta MERGE into a
   copy of the current table (the same live keys); and the dbt-native peer
   (``_dbt_native_peer``: an incremental merge model of the latest event per key and a
   snapshot of it, one ``dbt build`` on stock dbt-spark) and the hand-written Delta pipeline
   (``_delta_pipeline_peer``: ledger and quarantine appended, the history by the staged-updates
   MERGE, the current table by one MERGE), each built after step 1 and run after step 2, with
   the keys whose live rows differ from the project's current table (``wrong_rows``);
4. a ``--full-refresh`` of the models on the same batches: the ledger, history, current and
   quarantine must hold the rows the incremental runs left (``equals_full_refresh``).

Hash CDC (``--capability hash_cdc``): the demo dataset ``synthetic``, full extracts of
``--rows`` rows (100,000), each day changing 1% of them (a third deleted and replaced by new
keys, two thirds updated); ``--days`` days (3 and 30) built, then the next day built and tested.

Schema drift (``--capability schema_drift``): a bronze of H generated JSON events
(``--event-types`` types, batches of I) built, one more batch of I events built (the first run
after a full build logs bronze's files), then one more (5% of its events of a new variation)
built over it and measured, then ``dbt test`` of the same models.

For every step: Spark jobs, records and bytes read, shuffle bytes written (summed over the
application's tasks), wall seconds and peak resident memory of the command's process tree; for
the increment, the same per dbt model. Wall against a peer two ways: the whole command against
the peer's (``seconds``; the pipeline script's process), and the work alone (``work_seconds``:
the dbt nodes' own seconds; the pipeline's: the window of its own work). Ratios: increment at H
/ increment at the smallest H, increment / floor, project / each peer. Results to
benchmarks/results/increments_<capability>.json.

With ``--late-event-rate 0.01``, 1% of the events are up to a day older than their place in the
stream (older than their key's open version): the results go to
``increments_<capability>_late0.01.json``.

Usage: ``.venv/bin/python benchmarks/bench_increments.py --histories 100000 1000000``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _dbt_native_peer as dbt_native_peer
import _delta_pipeline_peer as delta_pipeline_peer
from _common import save_results, timed_subprocess_peak
from _event_log import Application, Reads, event_log_conf, new_applications, read_applications

from spark_cdc_dev.project_copies import copy_project

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHANGE_EVENT_MODELS = ("stg_change_events__customers+", "stg_change_events__customers_initial+")
SCHEMA_DRIFT_MODELS = ("stg_schema_drift__events+",)
HASH_CDC_MODELS = ("stg_hash_cdc__synthetic+",)
FIRST_DAY = date(2026, 1, 1)
LANDING = "landing.customers_change_events"
INITIAL = "landing.customers_initial_rows"
CURRENT = "spark_cdc.change_events__customers_current"
# The tables a --full-refresh must leave as the incremental runs left them (process ids aside;
# the run summary has a row per run, so it differs by construction).
REBUILT_TABLES = (
    "spark_cdc.int_change_events__customers_ledger",
    "spark_cdc.change_events__customers_history",
    CURRENT,
    "spark_cdc.change_events__customers_quarantine",
)

FLOOR = """
import sys, time
from delta.tables import DeltaTable
from pyspark.sql import functions as F
from spark_cdc.session.runtime import get_or_create_session

spark = get_or_create_session()
batch = int(sys.argv[1])
spark.sql("drop table if exists spark_cdc.floor_current")
spark.sql("create table spark_cdc.floor_current using delta as select * from {current}")
started = int(time.time() * 1000)
VALUES = {{"name": "s.name", "amount": "s.amount", "updated_at": "s.updated_at"}}
events = spark.table("{landing}").where(F.col("_batch_id") == batch)
valid = events.where(
    F.lower("change_type").isin("insert", "update", "delete") & F.col("event_ts").isNotNull()
)
image_key = F.element_at("column_values", 1)
old_key = F.element_at("old_key_values", 1)
# An update that moves a key is a delete of the old key and an upsert of the new one.
actions = valid.select(
    F.coalesce(image_key, old_key).cast("int").alias("id"),
    F.when(F.lower("change_type") == "delete", "delete").otherwise("upsert").alias("kind"),
    "event_ts", "event_seq", "column_values",
).unionByName(
    valid.where((F.lower("change_type") == "update") & (old_key != image_key)).select(
        old_key.cast("int").alias("id"), F.lit("delete").alias("kind"),
        "event_ts", "event_seq", "column_values",
    )
)
latest = (
    actions.groupBy("id")
    .agg(F.max(F.struct("event_ts", "event_seq", "kind", "column_values")).alias("e"))
    .select(
        "id",
        F.col("e.kind").alias("kind"),
        F.element_at("e.column_values", 2).alias("name"),
        F.element_at("e.column_values", 3).cast("int").alias("amount"),
        F.col("e.event_ts").alias("updated_at"),
    )
)
(
    DeltaTable.forName(spark, "spark_cdc.floor_current").alias("t")
    .merge(latest.alias("s"), "t.id = s.id")
    .whenMatchedDelete(condition="s.kind = 'delete'")
    .whenMatchedUpdate(set=VALUES)
    .whenNotMatchedInsert(condition="s.kind != 'delete'", values={{"id": "s.id", **VALUES}})
    .execute()
)
print("FLOOR_WINDOW", started, int(time.time() * 1000))
"""


class Case:
    """One history size: its folders, environment and the logged applications of its steps."""

    def __init__(self, work: Path, name: str) -> None:
        self.root = work / name
        self.project = copy_project(self.root / "project", PROJECT)
        self.home = self.root / "home"
        self.logs = self.root / "event_logs"
        self.conf = event_log_conf(self.root / "conf", self.logs)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_CDC_TARGET="local",
            SPARK_CDC_HOME=str(self.home),
            SPARK_CONF_DIR=str(self.conf),
            DBT_PROFILES_DIR=str(self.project / "profiles"),
            PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        )
        return env

    def run(
        self, *command: str, extra: dict[str, str] | None = None, cwd: Path | None = None
    ) -> str:
        """Run a command unmeasured (``extra``: environment variables over the case's; ``cwd``:
        another dbt project of the home, its profile beside it); its output."""
        done = subprocess.run(
            command,
            cwd=cwd or self.project,
            env={**self.env(), **(extra or {}), **self._profile_of(cwd)},
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
        return done.stdout

    @staticmethod
    def _profile_of(cwd: Path | None) -> dict[str, str]:
        return {"DBT_PROFILES_DIR": str(cwd)} if cwd else {}

    def measured(self, *command: str, cwd: Path | None = None) -> tuple[dict, Application | None]:
        """Run a command, return its wall seconds, peak memory and reads (and its application)."""
        before = set(read_applications(self.logs))
        env = {**self.env(), **self._profile_of(cwd)}
        seconds, peak = timed_subprocess_peak(command, env, cwd or self.project)
        apps = new_applications(self.logs, before)
        total = Reads()
        for app in apps:
            total.add(app.total())
        figures = {"seconds": round(seconds, 1), "peak_mib": round(peak), **total.as_dict()}
        return figures, (apps[0] if len(apps) == 1 else None)


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def per_model(project: Path, app: Application | None) -> dict[str, dict]:
    """Each dbt node's reads, from the tasks that finished during its compile and execute."""
    if app is None:
        return {}
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    figures = {}
    for result in results:
        timing = [t for t in result.get("timing", []) if t.get("started_at")]
        if not timing:
            continue
        start = min(_ms(t["started_at"]) for t in timing)
        end = max(_ms(t["completed_at"]) for t in timing)
        reads = app.total(start, end).as_dict()
        figures[result["unique_id"].split(".")[-1]] = {
            "seconds": round(result.get("execution_time", 0.0), 1),
            **reads,
        }
    return figures


def max_gap_ms_for_a_day(events: int) -> int:
    """The generator's max_gap_ms under which ``events`` events span about a day (gaps of 1 to
    max_gap_ms ms average (1 + max_gap_ms) / 2)."""
    return max(1, round(2 * 86_400_000 / events) - 1)


def change_events_case(
    work: Path, history: int, increment: int, live_keys: int, late_event_rate: float
) -> dict:
    """The full build of ``history`` events, one increment over it, its test and the floor."""
    late = f"_late{late_event_rate:g}" if late_event_rate else ""
    case = Case(work, f"change_events_{history}{late}")
    stream, batches = generated_stream(case, history, increment, live_keys, late_event_rate)
    land = (str(BIN / "spark-cdc"), "land-change-events", str(stream), "--table", LANDING)
    initial = ("--initial-table", INITIAL)
    case.run(*land, "--batches", f"0:{batches}", *initial)
    dbt = str(BIN / "dbt")
    full, full_app = case.measured(dbt, "run", "--select", *CHANGE_EVENT_MODELS)
    full["work_seconds"] = _work_seconds(per_model(case.project, full_app))
    # A daily run tests every day: the first test reads every row, each later one what changed
    # since it last passed (scoped tests), so the increment's test is measured after a first.
    case.run(dbt, "test", "--select", *CHANGE_EVENT_MODELS)
    peer = dbt_native_peer.write_project(case.root / "native_peer")
    peer_full = _peer_run(case, peer)
    pipeline = delta_pipeline_peer.pipeline_script(case.root, LANDING, INITIAL)
    pipeline_full = _windowed(case, pipeline, 0, batches)
    case.run(*land, "--batches", f"{batches}:{batches + 1}")
    run, app = case.measured(dbt, "run", "--select", *CHANGE_EVENT_MODELS)
    models = per_model(case.project, app)
    run["work_seconds"] = _work_seconds(models)
    peer_increment = _peer_run(case, peer)
    peer_increment["wrong_rows"] = _wrong_rows(case, "native_peer.customers_live")
    pipeline_increment = _windowed(case, pipeline, batches, batches + 1)
    pipeline_increment["wrong_rows"] = _wrong_rows(case, "delta_peer.current")
    test, test_app = case.measured(dbt, "test", "--select", *CHANGE_EVENT_MODELS)
    tests = per_model(case.project, test_app)
    idle = _run_without_new_events(case)
    floor = _floor(case, batches)
    equal = _equals_a_full_refresh(case)
    print(
        f"history {history:,}: increment read {run['records_read']:,} records "
        f"({run['bytes_read'] / 1e6:.0f} MB), floor {floor['records_read']:,}; "
        f"test {test['records_read']:,}",
        flush=True,
    )
    return {
        "history_events": history,
        "increment_events": increment,
        "late_event_rate": late_event_rate,
        "live_keys": live_keys,
        "full_build": full,
        "increment": run,
        "increment_models": models,
        "test": test,
        "tests": tests,
        "no_new_events": idle,
        "floor": floor,
        "dbt_native_peer": {"full_build": peer_full, "increment": peer_increment},
        "delta_pipeline_peer": {"full_build": pipeline_full, "increment": pipeline_increment},
        "equals_full_refresh": equal,
    }


def generated_stream(
    case: Case, history: int, increment: int, live_keys: int, late_event_rate: float
) -> tuple[Path, int]:
    """The case's stream of ``history`` events and one more batch (the increment), at fixed
    live keys, each batch about a day of event time; (its folder, the history's batches)."""
    stream = case.root / "stream"
    batches = history // increment
    case.run(
        *(str(BIN / "spark-cdc"), "generate-change-events", str(stream)),
        *("--events", str((batches + 1) * increment), "--batches", str(batches + 1)),
        *("--initial-rows", str(live_keys), "--insert-rate", "0", "--reinsert-rate", "0.1"),
        *("--delete-rate", "0.1", "--late-batch-rate", "0", "--no-progress"),
        *("--late-event-rate", str(late_event_rate)),
        *("--max-gap-ms", str(max_gap_ms_for_a_day(increment))),
    )
    return stream, batches


def _run_without_new_events(case: Case) -> dict:
    """A run after the increment with nothing landed since: its jobs and reads, by model, and
    the tables it wrote (by their Delta versions; none is the goal)."""
    before = _digests(case)
    idle, app = case.measured(str(BIN / "dbt"), "run", "--select", *CHANGE_EVENT_MODELS)
    idle["models"] = per_model(case.project, app)
    after = _digests(case)
    idle["tables_written"] = sorted(
        table for table in before if before[table][0] != after[table][0]
    )
    return idle


def _windowed(case: Case, script: Path, *arguments: int) -> dict:
    """A script's figures from the window it prints (``<NAME>_WINDOW start end``, epoch ms):
    its own work, not the session's start."""
    before = set(read_applications(case.logs))
    started = time.perf_counter()
    output = case.run(str(BIN / "python"), str(script), *(str(a) for a in arguments))
    seconds = time.perf_counter() - started
    window = [line for line in output.splitlines() if "_WINDOW " in line][-1]
    start, end = (int(part) for part in window.split()[1:])
    reads = Reads()
    for app in new_applications(case.logs, before):
        reads.add(app.total(start, end))
    return {
        "seconds": round((end - start) / 1000, 1),
        "process_seconds": round(seconds, 1),
        **reads.as_dict(),
    }


def _wrong_rows(case: Case, table: str) -> int:
    """How many keys' rows of ``table`` differ from the project's current table's."""
    script = delta_pipeline_peer.wrong_rows_script(case.root, table, CURRENT)
    output = case.run(str(BIN / "python"), str(script))
    return int(output.split("WRONG_ROWS")[-1].split()[0])


def _peer_run(case: Case, peer: Path) -> dict:
    """The dbt-native peer's run, as its user runs it: one ``dbt build`` (the incremental model,
    its view, then the snapshot of the view); ``work_seconds``: its nodes' own seconds."""
    figures, app = case.measured(str(BIN / "dbt"), "build", cwd=peer)
    figures["work_seconds"] = _work_seconds(per_model(peer, app))
    return figures


def _work_seconds(models: dict[str, dict]) -> float:
    """The summed execution seconds of a dbt command's nodes: its work without the start of
    dbt and its Spark session."""
    return round(sum(figures["seconds"] for figures in models.values()), 1)


def _digests(case: Case) -> dict:
    command = (str(BIN / "python"), "-m", "spark_cdc_dev.table_state", *REBUILT_TABLES)
    output = case.run(*command, "--exclude", "process_id")
    line = [text for text in output.splitlines() if text.startswith("DIGESTS=")][-1]
    return json.loads(line.removeprefix("DIGESTS="))


def _equals_a_full_refresh(case: Case) -> dict[str, bool]:
    """Per table: whether a ``--full-refresh`` of the models on the same landed batches leaves
    the rows the full build and the increment left (process ids aside)."""
    incremental = _digests(case)
    case.run(str(BIN / "dbt"), "run", "--select", *CHANGE_EVENT_MODELS, "--full-refresh")
    rebuilt = _digests(case)
    # Each digest is [Delta version, row count, hash of the rows]: the versions differ.
    return {table: incremental[table][1:] == rebuilt[table][1:] for table in REBUILT_TABLES}


def schema_drift_case(work: Path, history: int, increment: int, event_types: int) -> dict:
    """The full build of a bronze of ``history`` events (batches of ``increment``), one more
    landed batch built over it, and its test. No floor: nothing short of the project keeps a
    registry, superset schemas and silver tables."""
    case = Case(work, f"schema_drift_{history}")
    landing = case.home / "landing" / "schema_drift" / "events"
    generate = (str(BIN / "spark-cdc"), "generate-json-events", str(landing))
    common = ("--event-types", str(event_types), "--no-type-conflicts", "--no-progress")
    batches = history // increment
    case.run(*generate, "--events", str(history), "--batches", str(batches), *common)
    dbt = str(BIN / "dbt")
    full, _ = case.measured(dbt, "run", "--select", *SCHEMA_DRIFT_MODELS)
    # Two more batches: the first run after a full build logs bronze's files once (see
    # schema_drift.landed_files); the second is a day like any other, measured.
    for number, seed in ((batches + 1, 7), (batches + 2, 8)):
        case.run(
            *generate,
            *("--events", str(increment), "--batches", "1", "--first-batch", str(number)),
            *("--seed", str(seed), "--new-variation-rate", "0.05"),
            *common,
        )
        if number == batches + 1:
            case.run(dbt, "run", "--select", *SCHEMA_DRIFT_MODELS)
    run, app = case.measured(dbt, "run", "--select", *SCHEMA_DRIFT_MODELS)
    models = per_model(case.project, app)
    run["work_seconds"] = _work_seconds(models)
    test, test_app = case.measured(dbt, "test", "--select", *SCHEMA_DRIFT_MODELS)
    print(
        f"history {history:,}: increment read {run['records_read']:,} records "
        f"({run['bytes_read'] / 1e6:.0f} MB); test {test['records_read']:,}",
        flush=True,
    )
    return {
        "history_events": history,
        "increment_events": increment,
        "event_types": event_types,
        "full_build": full,
        "increment": run,
        "increment_models": models,
        "test": test,
        "tests": per_model(case.project, test_app),
        "floor": None,
    }


def hash_cdc_case(work: Path, days: int, rows: int, change: float) -> dict:
    """``days`` days of full extracts of ``rows`` rows built (each day changes ``change`` of
    the rows: a third deleted and replaced by new keys, two thirds updated), then day
    ``days + 1`` built and tested. The earlier days run on the home's warm engine (unmeasured),
    the measured day on the embedded runtime."""
    case = Case(work, f"hash_cdc_{days}_days")
    landing = case.home / "landing" / "synthetic"
    dates = [FIRST_DAY + timedelta(days=n) for n in range(days + 1)]
    folders = [str(landing / d.isoformat()) for d in dates]
    deleted = round(change / 3, 6)
    updated = round(change - deleted, 6)
    case.run(
        *(str(BIN / "spark-cdc"), "generate-extracts", "--initial-records", str(rows)),
        *("--incremental-records", str(rows), "--key-columns", "5", "--nonkey-columns", "10"),
        *("--pct-deleted", str(deleted), "--pct-updated", str(updated)),
        *("--pct-unchanged", str(round(1 - deleted - updated, 6))),
        *("--initial-output", folders[0], "--format", "csv", "--no-progress"),
        *(part for folder in folders[1:] for part in ("--incremental-output", folder)),
    )
    dbt = str(BIN / "dbt")

    def day(n: int) -> tuple[str, ...]:
        return ("--select", *HASH_CDC_MODELS, "--vars", f"{{hash_cdc_effective_date: {dates[n]}}}")

    engine = {"SPARK_CDC_TARGET": "engine"}
    for n in range(days):
        case.run(dbt, "run", *day(n), extra=engine)
    case.run(str(BIN / "spark-cdc"), "engine", "stop", extra=engine)
    run, app = case.measured(dbt, "run", *day(days))
    models = per_model(case.project, app)
    run["work_seconds"] = _work_seconds(models)
    test, test_app = case.measured(dbt, "test", *day(days))
    print(
        f"{days} days: day {days + 1} read {run['records_read']:,} records "
        f"({run['bytes_read'] / 1e6:.0f} MB); test {test['records_read']:,}",
        flush=True,
    )
    return {
        "history_events": days,
        "history_days": days,
        "rows": rows,
        "change": change,
        "increment": run,
        "increment_models": models,
        "test": test,
        "tests": per_model(case.project, test_app),
        "floor": None,
    }


def _floor(case: Case, batch: int) -> dict:
    """The floor's figures: only its own work (the aggregate and the MERGE), from its window."""
    script = case.root / "floor.py"
    script.write_text(FLOOR.format(current=CURRENT, landing=LANDING))
    return _windowed(case, script, batch)


def ratios(cases: list[dict]) -> dict:
    """Increment and test reads at each history over the smallest history's; increment over the
    floor's."""
    first = cases[0]
    out = {}
    for case in cases:
        history = case["history_events"]
        out[str(history)] = {
            "increment_records_vs_smallest": _ratio(case, first, "increment", "records_read"),
            "increment_bytes_vs_smallest": _ratio(case, first, "increment", "bytes_read"),
            "test_records_vs_smallest": _ratio(case, first, "test", "records_read"),
            "increment_records_vs_floor": _div(
                case["increment"]["records_read"], (case["floor"] or {}).get("records_read", 0)
            ),
            "increment_bytes_vs_floor": _div(
                case["increment"]["bytes_read"], (case["floor"] or {}).get("bytes_read", 0)
            ),
            **_peer_ratios(case),
        }
    return out


def _peer_ratios(case: dict) -> dict:
    """The increment's and full build's wall time, jobs and records over each peer's (change
    events)."""
    ratios = {}
    for name in ("dbt_native_peer", "delta_pipeline_peer"):
        peer = case.get(name) or {}
        for step in ("increment", "full_build"):
            if not peer.get(step):
                continue
            ours, theirs = case[step], peer[step]
            # seconds: the whole command against the peer's (the pipeline script's process,
            # its Spark session's start included); work_seconds: the dbt nodes' own seconds
            # against the peer's (the pipeline's: the window of its own work).
            whole = theirs.get("process_seconds", theirs["seconds"])
            ratios[f"{step}_seconds_vs_{name}"] = _div(ours["seconds"], whole)
            work = theirs.get("work_seconds", theirs["seconds"])
            if "work_seconds" in ours:
                ratios[f"{step}_work_seconds_vs_{name}"] = _div(ours["work_seconds"], work)
            for figure in ("jobs", "records_read"):
                ratios[f"{step}_{figure}_vs_{name}"] = _div(ours[figure], theirs[figure])
    return ratios


def _ratio(case: dict, first: dict, step: str, figure: str) -> float | None:
    return _div(case[step][figure], first[step][figure])


def _div(top: float, bottom: float) -> float | None:
    return round(top / bottom, 2) if bottom else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--capability",
        choices=("change_events", "schema_drift", "hash_cdc"),
        default="change_events",
    )
    parser.add_argument("--days", type=int, nargs="+", default=[3, 30], help="hash CDC: days")
    parser.add_argument("--rows", type=int, default=100_000, help="hash CDC: rows per extract")
    parser.add_argument("--event-types", type=int, default=20, help="schema drift: event types")
    parser.add_argument("--histories", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--increment", type=int, default=10_000)
    parser.add_argument("--live-keys", type=int, default=100_000)
    parser.add_argument(
        "--late-event-rate",
        type=float,
        default=0.0,
        help="share of the events up to a day older than their place (their key's open version)",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/spark_cdc_increments"))
    args = parser.parse_args()
    if args.capability == "hash_cdc":
        cases = [hash_cdc_case(args.work, days, args.rows, 0.01) for days in sorted(args.days)]
    elif args.capability == "schema_drift":
        cases = [
            schema_drift_case(args.work, history, args.increment, args.event_types)
            for history in sorted(args.histories)
        ]
    else:
        cases = [
            change_events_case(
                args.work, history, args.increment, args.live_keys, args.late_event_rate
            )
            for history in sorted(args.histories)
        ]
    late = f"_late{args.late_event_rate:g}" if args.late_event_rate else ""
    save_results(
        f"increments_{args.capability}{late}",
        {"capability": args.capability, "cases": cases, "ratios": ratios(cases)},
    )
    print(json.dumps(ratios(cases), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
