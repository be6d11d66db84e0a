"""The main job: every capability of the project end to end on the embedded runtime.

Run with ``make run``. Each step prints what it did; dbt runs in this process, on the embedded
Spark application (Delta Lake + persistent metastore under ``$SPARK_CDC_HOME``; each dbt
thread a session of its own). The job replays its
demo from scratch each time, so running it again gives the same tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from spark_cdc.change_events.landing import (
    land_batch_files,
    land_debezium_files,
    land_initial_rows,
)
from spark_cdc.cli.dbt_invoke import last_invocation_id, node_statuses, run_dbt
from spark_cdc.core.dbt_project_files import project_root
from spark_cdc.generators.change_events import SCHEMA as CHANGE_EVENT_SCHEMA
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc.generators.debezium import SCHEMA as DEBEZIUM_SCHEMA
from spark_cdc.generators.debezium import DebeziumSpec, write_debezium_stream
from spark_cdc.generators.extracts import ExtractSpec, article_example, generate_extracts
from spark_cdc.generators.json_events import JsonEventSpec, write_batches
from spark_cdc.session.runtime import default_home
from spark_cdc.targets import session_for
from spark_cdc_dev.main_report import summary_table

# The profile's schema (profiles/profiles.yml: SPARK_CDC_SCHEMA, default spark_cdc); main() sets
# SCHEMA to it when the job starts.
DEFAULT_SCHEMA = "spark_cdc"
SCHEMA = DEFAULT_SCHEMA
HASH_CDC_DATES = ("2019-06-18", "2019-06-19", "2019-06-20")
# The demo's sources (scripts/demo_sources.sh): two hash-CDC datasets, two change-event sources
# (events with existing rows; Debezium messages with a composite key), one JSON feed.
HASH_CDC_DATASETS = ("synthetic", "inventory")
HASH_CDC_MODELS = [f"stg_hash_cdc__{d}+" for d in HASH_CDC_DATASETS]
CHANGE_EVENT_SOURCES = ("customers", "accounts")
CHANGE_EVENT_SELECTION = {
    "customers": ["stg_change_events__customers+", "stg_change_events__customers_initial+"],
    "accounts": ["stg_change_events__accounts+"],
}
CHANGE_EVENT_MODELS = [model for models in CHANGE_EVENT_SELECTION.values() for model in models]
# Batches of each source landed by each of the three deliveries.
CHANGE_EVENT_DELIVERIES = (
    {"customers": slice(0, 3), "accounts": slice(0, 2)},
    {"customers": slice(3, 6), "accounts": slice(2, 4)},
    {"customers": slice(6, 9), "accounts": slice(4, 6)},
)


def profile_schema() -> str:
    """The schema the profile builds in (SPARK_CDC_SCHEMA, as profiles/profiles.yml reads it)."""
    return os.environ.get("SPARK_CDC_SCHEMA", DEFAULT_SCHEMA)


def hash_cdc_tables(schema: str) -> tuple[str, ...]:
    """The demo's hash-CDC tables when the profile's schema is ``schema``."""
    return (
        *(
            f"{schema}.{model}"
            for d in HASH_CDC_DATASETS
            for model in (
                f"stg_hash_cdc__{d}",
                f"hash_cdc__{d}_current",
                f"hash_cdc__{d}_history",
                f"hash_cdc__{d}_quarantine",
                f"hash_cdc__{d}_run_summary",
            )
        ),
        f"{schema}_restricted.hash_cdc__synthetic_sensitive",
    )


def change_event_tables(schema: str) -> tuple[str, ...]:
    """The demo's change-event tables (landing's and the models') when the profile's schema is
    ``schema``."""
    return (
        "landing.customers_initial_rows",
        *(
            table
            for source in CHANGE_EVENT_SOURCES
            for table in (
                f"landing.{source}_change_events",
                f"{schema}.int_change_events__{source}_ledger",
                f"{schema}.change_events__{source}_history",
                f"{schema}.change_events__{source}_current",
                f"{schema}.change_events__{source}_quarantine",
                f"{schema}.change_events__{source}_run_summary",
            )
        ),
    )


def schema_drift_tables(schema: str) -> tuple[str, ...]:
    """The demo feed's tables (landing's, the models') when the profile's schema is ``schema``."""
    return (
        "landing.events_json_lines",
        f"{schema}.int_schema_drift__events_bronze",
        f"{schema}.schema_drift__events_registry",
        f"{schema}.schema_drift__events_silver_loads",
        f"{schema}.schema_drift__events_quarantine",
        f"{schema}.schema_drift__events_run_summary",
    )


SCHEMA_DRIFT_MODELS = ["stg_schema_drift__events+"]
SILVER_PREFIX = "schema_drift_silver__events__"
# Sources of one kind are built side by side.
THREADS = ["--threads", "4"]
EXAMPLE_SNAPSHOTS = (
    "customers_ts_ignore",
    "customers_ts_invalidate",
    "customers_ts_new_record",
    "customers_check_all",
    "customers_check_cols_renamed",
    "customers_composite_key",
)


# Whether dbt prints its own log lines (--verbose); they always go to the log file.
VERBOSE = False


def dbt_log_dir() -> Path:
    """Where the main job's dbt commands write their log (dbt.log), under the home."""
    return default_home() / "logs"


def dbt_options(verbose: bool, terminal: bool) -> list[str]:
    """Options of the main job's dbt commands: the log under the home; quiet unless verbose (the
    job prints its own summary of each step; dbt still prints errors); no colour codes unless
    the output is a terminal."""
    options = ["--log-path", str(dbt_log_dir())]
    options += [] if verbose else ["--quiet"]
    options += [] if terminal else ["--no-use-colors"]
    return options


def _dbt(args: list[str]) -> Any:
    """``dbt <args>`` for the main job (dbt_options)."""
    return run_dbt([*args, *dbt_options(VERBOSE, sys.stdout.isatty())])


# (title, seconds) of every step run so far, for the closing table.
STEPS: list[tuple[str, float]] = []


def _step(title: str, action: Callable[[], str]) -> None:
    started = time.perf_counter()
    print(f"==> {title}", flush=True)
    summary = action()
    seconds = time.perf_counter() - started
    STEPS.append((title, seconds))
    print(f"    {summary} ({seconds:.1f} s)", flush=True)


def _dbt_summary(args: list[str]) -> str:
    statuses = node_statuses(_dbt(args))
    return ", ".join(f"{name}={status}" for name, status in statuses) or "done"


def _snapshot_day(spark, day: int) -> str:
    """Show the example source as of ``day`` and snapshot it; summarize what each run changed."""
    day_vars = json.dumps({"source_day": day})
    _dbt(["run", "--select", "stg_customer_states", "--vars", day_vars])
    _dbt(["snapshot", "--select", *EXAMPLE_SNAPSHOTS, "--vars", day_vars])
    invocation = last_invocation_id()
    entries = []
    for name in EXAMPLE_SNAPSHOTS:
        table = spark.table(f"{SCHEMA}.{name}")
        inserted = table.where(f"dbt_insert_process_id = '{invocation}'").count()
        closed = table.where(f"dbt_close_process_id = '{invocation}'").count()
        entries.append(f"{name.removeprefix('customers_')}={table.count()}/+{inserted}/-{closed}")
    text = f"day {day}, rows/+inserted/-closed by this run: " + ", ".join(entries)
    return "\n      ".join(textwrap.wrap(text, width=88, break_on_hyphens=False))


def _generate_extracts() -> str:
    """Three daily full extracts per dataset: synthetic (CSV, the article's example: 10,000
    rows, then 20% deleted, 40% updated, 40% unchanged) and inventory (Parquet, 5,000 rows, 2
    key columns, then 10% replaced, 30% updated)."""
    landing = default_home() / "landing"
    specs = {
        "synthetic": article_example(
            tuple(landing / "synthetic" / date for date in HASH_CDC_DATES), seed=2019
        ),
        "inventory": ExtractSpec(
            5_000,
            5_000,
            2,
            3,
            0.1,
            0.3,
            0.6,
            tuple(landing / "inventory" / date for date in HASH_CDC_DATES),
            file_format="parquet",
            seed=7,
        ),
    }
    lines = []
    for dataset, spec in specs.items():
        manifests = generate_extracts(spec, show_progress=False)
        days = ", ".join(
            f"{date} {m['inserted']}/{m['updated']}/{m['deleted']}/{m['unchanged']}"
            for date, m in zip(HASH_CDC_DATES, manifests, strict=True)
        )
        lines.append(f"{dataset}, {manifests[0]['rows']} rows a day, I/U/D/N: {days}")
    return "\n      ".join(lines)


def _hash_cdc_day(spark, date: str) -> str:
    """dbt build of both datasets' models for one effective date; each run's summary row."""
    variables = json.dumps({"hash_cdc_effective_date": date})
    _dbt(["build", "--select", *HASH_CDC_MODELS, "--vars", variables, *THREADS])
    lines = []
    for dataset in HASH_CDC_DATASETS:
        row = spark.sql(
            f"select * from {SCHEMA}.hash_cdc__{dataset}_run_summary where eff_date = '{date}'"
        ).first()
        lines.append(
            f"{dataset} {date}: in={row.rows_in} applied={row.valid_rows} "
            f"quarantined={row.quarantined_rows} I={row.inserted} U={row.updated} "
            f"D={row.deleted} X={row.not_supplied} N={row.unchanged}"
        )
    return "\n      ".join(lines)


def _change_event_folder(source: str) -> Path:
    return default_home() / "landing" / "change_events" / source


def _change_event_streams() -> str:
    """customers: 2,000 rows, 20,000 events in 9 batches; accounts: Debezium messages of 300
    composite-key rows, 3,000 changes in 6 batches."""
    spec = StreamSpec(initial_rows=2_000, events=20_000, batches=9, seed=2026)
    events = write_stream(spec, _change_event_folder("customers"), show_progress=False)
    messages = write_debezium_stream(
        DebeziumSpec(accounts=300, events=3_000, batches=6, seed=2026),
        _change_event_folder("accounts"),
    )
    return (
        f"customers: {', '.join(f'{k}={v}' for k, v in events.items())}\n      "
        f"accounts: {', '.join(f'{k}={v}' for k, v in messages.items())}"
    )


def _change_event_delivery(spark, delivery: dict[str, slice]) -> str:
    """Land some batches of each source (the first time: customers' existing rows too), then
    one dbt build of both sources."""
    customers, accounts = _change_event_folder("customers"), _change_event_folder("accounts")
    if delivery["customers"].start == 0:
        land_initial_rows(
            spark,
            "landing.customers_initial_rows",
            customers / "initial_state.jsonl",
            CHANGE_EVENT_SCHEMA,
        )

    def batch_files(folder: Path, part: slice) -> list[Path]:
        return sorted((folder / "batches").glob("batch-*.jsonl"))[part]

    landed = {
        "customers": land_batch_files(
            spark,
            "landing.customers_change_events",
            batch_files(customers, delivery["customers"]),
        ),
        "accounts": land_debezium_files(
            spark,
            "landing.accounts_change_events",
            batch_files(accounts, delivery["accounts"]),
        ),
    }
    _dbt(["build", "--select", *CHANGE_EVENT_MODELS, *THREADS])
    lines = []
    for source in CHANGE_EVENT_SOURCES:
        row = spark.sql(
            f"select * from {SCHEMA}.change_events__{source}_run_summary "
            f"where process_id = '{last_invocation_id()}'"
        ).first()
        current = spark.table(f"{SCHEMA}.change_events__{source}_current").count()
        batches = landed[source].batch_ids
        lines.append(
            f"{source} batches {batches[0]}-{batches[-1]}: in={row.events_in} "
            f"applied={row.applied} duplicates={row.duplicates} quarantined={row.quarantined} "
            f"versions={row.versions_written} ambiguous={row.ambiguous_versions}; "
            f"current rows={current}"
        )
    return "\n      ".join(lines)


def _expected_state(source: str, columns: dict[str, str]) -> set[tuple]:
    """A stream's expected rows (decimals are written as their text)."""
    path = _change_event_folder(source) / "expected_state.jsonl"

    def typed(value, kind: str):
        return Decimal(value) if value is not None and kind.startswith("decimal") else value

    return {
        (
            *(typed(r[c], kind) for c, kind in columns.items()),
            datetime.fromisoformat(r["created_at"]),
            datetime.fromisoformat(r["updated_at"]),
            r["last_change_type"],
        )
        for r in map(json.loads, path.open())
    }


def _change_event_check(spark) -> str:
    """Each current table against its stream's expected state, then a full refresh against
    both."""
    columns = {
        "customers": tuple(CHANGE_EVENT_SCHEMA.columns),
        "accounts": tuple(DEBEZIUM_SCHEMA.columns),
    }
    types = {"customers": CHANGE_EVENT_SCHEMA.columns, "accounts": DEBEZIUM_SCHEMA.columns}
    expected = {source: _expected_state(source, types[source]) for source in columns}

    def current() -> dict[str, set[tuple]]:
        return {
            source: {
                tuple(r)
                for r in spark.table(f"{SCHEMA}.change_events__{source}_current")
                .select(*columns[source], "created_at", "updated_at", "last_change_type")
                .collect()
            }
            for source in columns
        }

    incremental = current()
    _dbt(["build", "--select", *CHANGE_EVENT_MODELS, "--full-refresh", *THREADS])
    rebuilt = current()
    if incremental != expected or rebuilt != incremental:
        raise RuntimeError("change-event resolution does not match its reference")
    sizes = ", ".join(f"{source} {len(rows)}" for source, rows in incremental.items())
    return (
        f"current rows ({sizes}) equal the plain-Python references, and the full refresh "
        "from all events gives the same tables"
    )


def _schema_drift_folders() -> tuple[Path, Path]:
    """Where the job generates JSON event batches, and the landing folder of the dbt source."""
    home = default_home()
    return home / "generated" / "json_events", home / "landing" / "schema_drift" / "events"


def _json_events() -> str:
    """JSON events whose schemas drift: 30,000 events of 8 event types (+2 new) in 3 batches."""
    generated, _ = _schema_drift_folders()
    spec = JsonEventSpec(events=30_000, event_types=8, new_event_types=2, batches=3, seed=2026)
    write_batches(generated, spec)
    manifest = json.loads((generated / "manifest.json").read_text())
    return f"events per batch={manifest['events_per_batch']} {manifest['counts']}"


def _schema_drift_delivery(spark, batch: int) -> str:
    """Land one generated batch folder in the landing folder, then dbt build."""
    generated, landing = _schema_drift_folders()
    name = f"batch_{batch:04d}"
    shutil.copytree(generated / name, landing / name)
    _dbt(["build", "--select", *SCHEMA_DRIFT_MODELS])
    rows = spark.sql(
        f"select * from {SCHEMA}.schema_drift__events_run_summary "
        f"where load_seq = (select max(load_seq) from {SCHEMA}.schema_drift__events_run_summary)"
    ).collect()
    total = {
        key: sum(getattr(r, key) for r in rows)
        for key in ("events_in", "parsed", "quarantined", "pending", "new_variations")
    }
    loads = spark.table(f"{SCHEMA}.schema_drift__events_silver_loads").where(
        f"to_load_seq = {rows[0].load_seq}"
    )
    modes: dict[str, int] = {}
    for row in loads.collect():
        modes[row.write_mode] = modes.get(row.write_mode, 0) + 1
    versions = sorted(f"{r.event_type}:v{r.schema_version}" for r in rows if r.schema_version)
    return (
        f"{name}: in={total['events_in']} parsed={total['parsed']} "
        f"quarantined={total['quarantined']} pending={total['pending']} "
        f"new variations={total['new_variations']}; silver writes {modes}; "
        f"versions {' '.join(versions)}"
    )


def _schema_drift_check(spark) -> str:
    """Counts against the generator's manifest, then a full refresh that must agree."""
    generated, _ = _schema_drift_folders()
    manifest = json.loads((generated / "manifest.json").read_text())
    bronze = spark.table(f"{SCHEMA}.int_schema_drift__events_bronze")
    malformed = bronze.where("parse_error = 'malformed_json'").count()
    if bronze.count() != sum(manifest["events_per_batch"]) or malformed != manifest["counts"].get(
        "malformed", 0
    ):
        raise RuntimeError("bronze does not hold every generated line")

    def state() -> tuple[set, dict]:
        registry = spark.table(f"{SCHEMA}.schema_drift__events_registry")
        tables = [t.name for t in spark.catalog.listTables(SCHEMA) if SILVER_PREFIX in t.name]
        return (
            {tuple(r) for r in registry.drop("registered_at", "process_id").collect()},
            {name: spark.table(f"{SCHEMA}.{name}").count() for name in tables},
        )

    incremental = state()
    _dbt(["build", "--select", *SCHEMA_DRIFT_MODELS, "--full-refresh"])
    if state() != incremental:
        raise RuntimeError("the full refresh of the registry and silver tables differs")
    quarantine = spark.table(f"{SCHEMA}.schema_drift__events_quarantine")
    conflicts = quarantine.where("quarantine_reason like 'type_conflict%'").count()
    return (
        f"bronze holds all {bronze.count()} lines ({malformed} malformed, as generated); "
        f"{len(incremental[0])} variations, {len(incremental[1])} silver tables "
        f"({sum(incremental[1].values())} rows), {conflicts} events of conflicting variations "
        "quarantined; the full refresh gives the same registry and silver tables"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the job and print a summary of every step."""
    global SCHEMA, VERBOSE
    SCHEMA = profile_schema()
    parser = argparse.ArgumentParser(prog="python -m spark_cdc_dev.main_job", description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="print dbt's own log lines too")
    VERBOSE = parser.parse_args(argv).verbose
    project = project_root()
    spark = session_for()
    print(f"Spark {spark.version} | warehouse {spark.conf.get('spark.sql.warehouse.dir')}")
    print(f"dbt's log: {dbt_log_dir() / 'dbt.log'}" + ("" if VERBOSE else " (--verbose prints it)"))

    def reset() -> str:
        spark.sql(f"create schema if not exists {SCHEMA}")
        for name in (*EXAMPLE_SNAPSHOTS, "customers_snapshot"):
            spark.sql(f"drop table if exists {SCHEMA}.{name}")
        tables = (
            *hash_cdc_tables(SCHEMA),
            *change_event_tables(SCHEMA),
            *schema_drift_tables(SCHEMA),
        )
        for table in tables:
            spark.sql(f"drop table if exists {table}")
        for table in spark.catalog.listTables(SCHEMA):
            if table.name.startswith(SILVER_PREFIX):
                spark.sql(f"drop table if exists {SCHEMA}.{table.name}")
        for folder in _schema_drift_folders():
            shutil.rmtree(folder, ignore_errors=True)
        # dbt's saved parse of the project: one left by a command under another profile or vars
        # could lack the demo's nodes; the job parses afresh once, then dbt keeps it up to date.
        (project_root() / "target" / "partial_parse.msgpack").unlink(missing_ok=True)
        return "dropped the demo tables and dbt's saved parse: the demo replays from day 1"

    _step("reset", reset)
    _step("dbt seed", lambda: _dbt_summary(["seed"]))
    for day in (1, 2, 3):
        _step(f"snapshots, source day {day}", lambda day=day: _snapshot_day(spark, day))
    _step("generate extracts (spark-cdc generate-extracts)", _generate_extracts)
    for date in HASH_CDC_DATES:
        _step(f"hash CDC, effective date {date}", lambda date=date: _hash_cdc_day(spark, date))
    _step(
        "generate change events (spark-cdc generate-change-events, generate-debezium-events)",
        _change_event_streams,
    )
    for number, delivery in enumerate(CHANGE_EVENT_DELIVERIES, start=1):
        _step(
            f"change events: delivery {number} of both sources, dbt build",
            lambda delivery=delivery: _change_event_delivery(spark, delivery),
        )
    _step("change events: check, then --full-refresh", lambda: _change_event_check(spark))
    _step("generate JSON events (spark-cdc generate-json-events)", _json_events)
    for batch in (1, 2, 3):
        _step(
            f"schema drift: land batch {batch}, dbt build",
            lambda batch=batch: _schema_drift_delivery(spark, batch),
        )
    _step("schema drift: check, then --full-refresh", lambda: _schema_drift_check(spark))
    _step(
        "dbt snapshot (staged customers)",
        lambda: _build_summary(["build", "-s", "stg_customers", "customers_snapshot"]),
    )
    _step(
        "dbt run (Python model)",
        lambda: _dbt_summary(["run", "--select", "customers_by_segment"]),
    )
    _step(
        "dbt build (day 3 again: snapshots find no change, hash CDC re-applies its last date)",
        lambda: _build_summary(
            [
                "build",
                "--vars",
                json.dumps({"source_day": 3, "hash_cdc_effective_date": HASH_CDC_DATES[-1]}),
            ]
        ),
    )
    _step("customers per segment (the Python model's table)", lambda: _segments(spark))
    _step("dbt docs generate", lambda: _docs(project))
    print("\n".join(["", *summary_table(STEPS)]), flush=True)
    return 0


def _segments(spark) -> str:
    rows = spark.table(f"{SCHEMA}.customers_by_segment").orderBy("segment").collect()
    return ", ".join(f"{row.segment}={row.customer_count}" for row in rows)


def _build_summary(args: list[str]) -> str:
    statuses = node_statuses(_dbt(args))
    counts: dict[str, int] = {}
    for _, status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))


def _docs(project: Path) -> str:
    _dbt(["docs", "generate"])
    catalog = project / "target" / "catalog.json"
    return f"wrote {catalog} ({catalog.stat().st_size} bytes)"


if __name__ == "__main__":
    sys.exit(main())
