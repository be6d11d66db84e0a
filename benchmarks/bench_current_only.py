"""A current-only source's increment beside a history source's, on the same events.

The demo source ``customers`` (history and current) and ``customers_now``, the same source added
by ``spark-cdc add change-events ... --stored-as-scd-type 1`` (current only), in one copy of the
project, fed the same generated stream as bench_increments' change-event case (``--live-keys``
existing rows, a history of H events in batches of I, ``--late-event-rate``): both built on the
first H events, then the next batch landed for both and each source's models run on their own
(the increment). For each: Spark jobs, records and bytes read, shuffle bytes, wall seconds, peak
memory, per model; and whether the two current tables hold the same rows (process ids aside).
Results to benchmarks/results/increments_current_only.json (``_late<rate>`` with late events).

Usage: ``.venv/bin/python benchmarks/bench_current_only.py --histories 100000``
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import save_results
from bench_increments import (
    BIN,
    CHANGE_EVENT_MODELS,
    CURRENT,
    INITIAL,
    LANDING,
    Case,
    _work_seconds,
    generated_stream,
    per_model,
)

from spark_cdc.generators.change_events import SCHEMA

SOURCE = "customers_now"
MODELS = (f"stg_change_events__{SOURCE}+", f"stg_change_events__{SOURCE}_initial+")
NOW_LANDING = f"landing.{SOURCE}_change_events"
NOW_INITIAL = f"landing.{SOURCE}_initial_rows"
NOW_CURRENT = f"spark_cdc.change_events__{SOURCE}_current"


def current_only_case(work: Path, history: int, increment: int, live_keys: int, late: float):
    """Both sources' full builds and increments over ``history`` events."""
    suffix = f"_late{late:g}" if late else ""
    case = Case(work, f"current_only_{history}{suffix}")
    stream, batches = generated_stream(case, history, increment, live_keys, late)
    _add_current_only_source(case)
    land = (str(BIN / "spark-cdc"), "land-change-events", str(stream))
    for table, initial in ((LANDING, INITIAL), (NOW_LANDING, NOW_INITIAL)):
        case.run(*land, "--table", table, "--batches", f"0:{batches}", "--initial-table", initial)
    dbt = str(BIN / "dbt")
    sources = {"history_source": CHANGE_EVENT_MODELS, "current_only": MODELS}
    figures: dict[str, dict] = {}
    for name, models in sources.items():
        full, app = case.measured(dbt, "run", "--select", *models)
        full["work_seconds"] = _work_seconds(per_model(case.project, app))
        figures[name] = {"full_build": full}
    for table in (LANDING, NOW_LANDING):
        case.run(*land, "--table", table, "--batches", f"{batches}:{batches + 1}")
    for name, models in sources.items():
        run, app = case.measured(dbt, "run", "--select", *models)
        figures[name]["increment_models"] = per_model(case.project, app)
        run["work_seconds"] = _work_seconds(figures[name]["increment_models"])
        figures[name]["increment"] = run
    same = case.run(str(BIN / "python"), "-c", SAME_ROWS.format(CURRENT, NOW_CURRENT))
    return {
        "history_events": history,
        "increment_events": increment,
        "late_event_rate": late,
        "live_keys": live_keys,
        **figures,
        "same_current_rows": same.strip().splitlines()[-1] == "SAME",
    }


def _add_current_only_source(case: Case) -> None:
    """``spark-cdc add change-events customers_now ... --stored-as-scd-type=1``, written in a
    plain project (the demo's model path is a Jinja expression, which ``add`` refuses) and its
    models copied into the case's project."""
    plain = case.root / "added"
    (plain / "models").mkdir(parents=True, exist_ok=True)
    (plain / "dbt_project.yml").write_text("name: added\nprofile: spark_cdc\n")
    add = [str(BIN / "spark-cdc"), "add", "change-events", SOURCE, "--initial-rows"]
    add += [f"--key={key}" for key in SCHEMA.keys]
    add += [f"--column={name}:{kind}" for name, kind in SCHEMA.columns.items()]
    case.run(*add, "--stored-as-scd-type=1", "--project-dir", str(plain))
    shutil.copytree(plain / "models", case.project / "models", dirs_exist_ok=True)


SAME_ROWS = """
from spark_cdc.session.runtime import get_or_create_session
spark = get_or_create_session()
a, b = (spark.table(t).drop("process_id") for t in ("{0}", "{1}"))
print("SAME" if a.exceptAll(b).isEmpty() and b.exceptAll(a).isEmpty() else "DIFFERENT")
"""


def ratios(case: dict) -> dict:
    """The current-only source's increment over the history source's, figure by figure."""
    ours, theirs = case["current_only"]["increment"], case["history_source"]["increment"]
    figures = ("jobs", "records_read", "bytes_read", "seconds", "work_seconds")
    return {
        f"increment_{figure}_vs_history_source": (
            round(ours[figure] / theirs[figure], 2) if theirs[figure] else None
        )
        for figure in figures
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, nargs="+", default=[100_000])
    parser.add_argument("--increment", type=int, default=10_000)
    parser.add_argument("--live-keys", type=int, default=100_000)
    parser.add_argument("--late-event-rate", type=float, default=0.0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/spark_cdc_current_only"))
    args = parser.parse_args()
    cases = [
        current_only_case(args.work, history, args.increment, args.live_keys, args.late_event_rate)
        for history in sorted(args.histories)
    ]
    found = {str(case["history_events"]): ratios(case) for case in cases}
    late = f"_late{args.late_event_rate:g}" if args.late_event_rate else ""
    save_results(f"increments_current_only{late}", {"cases": cases, "ratios": found})
    print(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
