"""Command line of the project's Python package: ``spark-cdc <command> ...``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from spark_cdc.cli.stream import add_stream_parser
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc.generators.extracts import ExtractSpec, GeneratorError, generate_extracts
from spark_cdc.generators.json_events import JsonEventSpec, write_batches
from spark_cdc.scaffold.cli import add_parser

POSITIONAL = (
    ("initial_records", int),
    ("incremental_records", int),
    ("key_columns", int),
    ("nonkey_columns", int),
    ("pct_deleted", float),
    ("pct_updated", float),
    ("pct_unchanged", float),
)


def _extract_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "generate-extracts",
        help="initial + incremental full extracts with exact delete/update/unchanged shares",
        description=(
            "Write an initial extract and incremental extracts after it. Positional form: "
            "INITIAL_RECORDS INCREMENTAL_RECORDS KEY_COLUMNS NONKEY_COLUMNS PCT_DELETED "
            "PCT_UPDATED PCT_UNCHANGED INITIAL_OUTPUT INCREMENTAL_OUTPUT [MORE_OUTPUTS...]; "
            "or the same values as named options. Deleted keys are replaced by new inserts."
        ),
    )
    parser.add_argument("values", nargs="*", help="the positional form (see above)")
    for name, kind in POSITIONAL:
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind, dest=name)
    parser.add_argument("--initial-output", type=Path, help="folder of the initial extract")
    parser.add_argument(
        "--incremental-output",
        type=Path,
        action="append",
        help="folder of an incremental extract (repeat for day 3, 4, ...)",
    )
    parser.add_argument("--format", choices=("csv", "parquet"), default="csv")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same data)")
    parser.add_argument("--chunk-rows", type=int, default=1_000_000, help="rows per part file")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=_run_extracts)


def _run_extracts(args: argparse.Namespace) -> int:
    named = {name: getattr(args, name) for name, _ in POSITIONAL}
    outputs: list[Path] = []
    if args.values:
        if len(args.values) < len(POSITIONAL) + 2:
            raise GeneratorError(
                f"the positional form needs {len(POSITIONAL) + 2} values, got {len(args.values)}"
            )
        for (name, kind), value in zip(POSITIONAL, args.values, strict=False):
            named[name] = kind(value)
        outputs = [Path(v) for v in args.values[len(POSITIONAL) :]]
    if args.initial_output:
        outputs = [args.initial_output, *(args.incremental_output or [])]
    missing = [name for name, value in named.items() if value is None]
    if missing or not outputs:
        raise GeneratorError(f"missing values: {', '.join(missing) or 'output folders'}")
    spec = ExtractSpec(
        outputs=tuple(outputs),
        file_format=args.format,
        seed=args.seed,
        chunk_rows=args.chunk_rows,
        **named,
    )
    manifests = generate_extracts(spec, show_progress=not args.no_progress)
    for output, manifest in zip(outputs, manifests, strict=True):
        counts = ", ".join(f"{k}={v}" for k, v in manifest.items())
        print(f"{output}: {counts}")
    return 0


def _spec_options(parser: argparse.ArgumentParser, defaults: object) -> None:
    """One ``--option`` per field of a generator spec dataclass, defaulting to its value."""
    for name, value in vars(defaults).items():
        option = f"--{name.replace('_', '-')}"
        if isinstance(value, bool):
            parser.add_argument(option, action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(option, type=type(value), default=value)


def _spec_from(args: argparse.Namespace, spec_class: type) -> Any:
    """The generator spec of the parsed options."""
    return spec_class(**{name: getattr(args, name) for name in vars(spec_class())})


def _stream_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "generate-change-events",
        help="a change-event stream in batches, with its expected final state",
        description=(
            "Write initial_state.jsonl, batches/batch-NNNNN.jsonl (in delivery order), "
            "expected_state.jsonl (plain-Python reference) and manifest.json into OUTPUT."
        ),
    )
    parser.add_argument("output", type=Path)
    _spec_options(parser, StreamSpec())
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=_run_stream)


def _run_stream(args: argparse.Namespace) -> int:
    for name in (
        "key_change_rate",
        "duplicate_rate",
        "tie_rate",
        "late_batch_rate",
        "late_event_rate",
        "malformed_rate",
        "insert_rate",
        "reinsert_rate",
        "delete_rate",
    ):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise GeneratorError(f"{name} must be between 0.0 and 1.0")
    if args.insert_rate + args.reinsert_rate + args.delete_rate > 1.0:
        raise GeneratorError("insert, re-insert and delete rates must add up to at most 1.0")
    if args.events < 0 or args.initial_rows < 0 or args.batches < 1:
        raise GeneratorError("events and initial rows must be >= 0, batches >= 1")
    spec = _spec_from(args, StreamSpec)
    manifest = write_stream(spec, args.output, show_progress=not args.no_progress)
    print(json.dumps(manifest))
    return 0


def _land_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "land-change-events",
        help="land batch files of change events in a source's feed table (as an ingestion would)",
        description=(
            "Append the batch files STREAM/batches/batch-*.jsonl to the feed table, each as the "
            "next _batch_id: change events (generate-change-events format), or with --debezium "
            "Debezium messages (generate-debezium-events). With --initial-table, replace the "
            "existing-rows table with STREAM/initial_state.jsonl. Writes through the profile's "
            "target (SPARK_CDC_TARGET), as dbt does."
        ),
    )
    parser.add_argument("stream", type=Path, help="a folder with batches/batch-*.jsonl")
    parser.add_argument("--table", required=True, help="e.g. landing.orders_change_events")
    parser.add_argument("--debezium", action="store_true", help="the files hold Debezium messages")
    parser.add_argument("--initial-table", default=None, help="e.g. landing.orders_initial_rows")
    parser.add_argument(
        "--column",
        action="append",
        default=[],
        help="name:type of the existing rows (repeat; default: a generate-change-events stream's)",
    )
    parser.add_argument("--key", action="append", default=[], help="key of the existing rows")
    parser.add_argument(
        "--batches", default=None, help="a Python-style slice of the batch files, e.g. 0:3"
    )
    parser.set_defaults(handler=_run_land)


def _initial_schema(args: argparse.Namespace) -> Any:
    from spark_cdc.change_events.model import TargetSchema
    from spark_cdc.generators.change_events import SCHEMA
    from spark_cdc.scaffold.names import columns

    if not args.column:
        return SCHEMA
    return TargetSchema(columns(args.column, "--column"), tuple(args.key))


def _selected_batch_files(stream: Path, selection: str | None) -> list[Path]:
    """The batch files of ``stream`` that ``--batches`` selects (checked before Spark starts)."""
    files = sorted((stream / "batches").glob("batch-*.jsonl"))
    if not files:
        hint = ""
        if stream.name == "batches" and list(stream.glob("batch-*.jsonl")):
            hint = f" (give the folder that holds batches/: {stream.parent})"
        raise GeneratorError(f"no batches/batch-*.jsonl under {stream}{hint}")
    if not selection:
        return files
    start, colon, stop = selection.partition(":")
    try:
        bounds = [int(text) if text.strip() else None for text in (start, stop)]
    except ValueError:
        bounds = None
    if not colon or bounds is None:
        raise GeneratorError(f"--batches must read like 0:3, 2: or :4, not {selection!r}")
    chosen = files[slice(*bounds)]
    if not chosen:
        raise GeneratorError(
            f"--batches {selection} selects none of the {len(files)} batch files of {stream} "
            f"(0 to {len(files) - 1})"
        )
    return chosen


def _run_land(args: argparse.Namespace) -> int:
    from spark_cdc.change_events.landing import (
        land_batch_files,
        land_debezium_files,
        land_initial_rows,
    )
    from spark_cdc.targets import session_for

    stream = args.stream.resolve()  # Spark resolves relative paths from its own directory
    files = _selected_batch_files(stream, args.batches)
    schema = _initial_schema(args)
    spark = session_for()
    if args.initial_table:
        rows = land_initial_rows(spark, args.initial_table, stream / "initial_state.jsonl", schema)
        print(f"{args.initial_table}: {rows} existing rows")
    land = land_debezium_files if args.debezium else land_batch_files
    landing = land(spark, args.table, files)
    if landing.skipped:
        taken = ", ".join(
            f"{Path(name).name} (_batch_id {batch})" for name, batch in landing.skipped.items()
        )
        print(f"{args.table}: skipped {len(landing.skipped)} files landed before: {taken}")
    landed = landing.batch_ids
    if not landed:
        print(f"{args.table}: nothing new to land")
        return 0
    note = ""
    if not args.debezium:
        errors = (
            spark.table(args.table)
            .where(f"_batch_id >= {landed[0]} and _landing_error is not null")
            .count()
        )
        note = f" ({errors} unreadable lines kept with their reason)" if errors else ""
    print(f"{args.table}: landed {len(landed)} batches as _batch_id {landed[0]}-{landed[-1]}{note}")
    return 0


def _debezium_parser(commands: argparse._SubParsersAction) -> None:
    from spark_cdc.generators.debezium import DebeziumSpec

    parser = commands.add_parser(
        "generate-debezium-events",
        help="Debezium messages of a composite-key table, with their expected final state",
        description=(
            "Write batches/batch-NNNNN.jsonl (Debezium messages, delivery order), "
            "expected_state.jsonl (plain-Python reference) and manifest.json into OUTPUT."
        ),
    )
    parser.add_argument("output", type=Path)
    _spec_options(parser, DebeziumSpec())
    parser.set_defaults(handler=_run_debezium)


def _run_debezium(args: argparse.Namespace) -> int:
    from spark_cdc.generators.debezium import DebeziumSpec, write_debezium_stream

    if args.accounts < 1 or args.events < 0 or args.batches < 1:
        raise GeneratorError("accounts >= 1, events >= 0, batches >= 1")
    manifest = write_debezium_stream(_spec_from(args, DebeziumSpec), args.output)
    print(json.dumps(manifest))
    return 0


def _json_events_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "generate-json-events",
        help="JSON event batches whose schemas drift (new attributes, event types, conflicts)",
        description=(
            "Write OUTPUT/batch_NNNN/part-00000.jsonl (one JSON event per line) and "
            "OUTPUT/manifest.json. OUTPUT can be the schema drift landing folder "
            "($SPARK_CDC_HOME/landing/schema_drift/events)."
        ),
    )
    parser.add_argument("output", type=Path)
    _spec_options(parser, JsonEventSpec())
    parser.add_argument("--first-batch", type=int, default=1, help="number of the first batch")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=_run_json_events)


def _run_json_events(args: argparse.Namespace) -> int:
    for name in ("new_variation_rate", "malformed_rate"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise GeneratorError(f"{name} must be between 0.0 and 1.0")
    if args.events < 0 or args.event_types < 1 or args.batches < 1 or args.new_event_types < 0:
        raise GeneratorError("events >= 0, event types >= 1, new event types >= 0, batches >= 1")
    spec = _spec_from(args, JsonEventSpec)
    folders = write_batches(args.output, spec, args.first_batch, not args.no_progress)
    print(json.dumps({"batches": [str(folder) for folder in folders]}))
    return 0


def _sql_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "sql",
        help="run SQL statements on the project's engine and print what they return",
        description=(
            "Run each STATEMENT (e.g. describe history <table>; restore table <table> to "
            "version as of N; select ... version as of N) and print up to --limit rows of each."
        ),
    )
    parser.add_argument("statements", nargs="+", metavar="STATEMENT")
    parser.add_argument("--limit", type=int, default=50, help="rows printed per statement")
    parser.set_defaults(handler=_run_sql)


def _run_sql(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    from spark_cdc.targets import session_for

    spark = session_for()
    for statement in args.statements:
        try:
            frame = spark.sql(statement)
            rows = frame.limit(args.limit + 1).collect()
        except PySparkException as error:
            print(f"spark-cdc: error: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2
        print(_table(frame.columns, [tuple(row) for row in rows[: args.limit]]))
        if len(rows) > args.limit:
            print(f"(first {args.limit} rows)")
    return 0


def _table(columns: list[str], rows: list[tuple]) -> str:
    """Rows as an aligned text table (long values cut at 60 characters)."""

    def text(value: object) -> str:
        shown = "NULL" if value is None else str(value)
        return shown if len(shown) <= 60 else shown[:57] + "..."

    cells = [[text(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _engine_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "engine",
        help="the warm local engine: Spark Connect (or Thrift) server of this SPARK_CDC_HOME",
        description=(
            "start: run Spark's Connect server (--thrift: its Thrift server) with the project's "
            "settings, bound to 127.0.0.1, in the background (stops after --idle-timeout seconds "
            "without a client); stop; status. dbt's 'engine' target and the project's commands "
            "find it (and start it when needed)."
        ),
    )
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--thrift", action="store_true", help="the Thrift server instead")
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="a fixed port (default: a free one, recorded in the state)",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=1800.0, help="seconds without a client (1800)"
    )
    parser.set_defaults(handler=_run_engine)


def _run_engine(args: argparse.Namespace) -> int:
    from spark_cdc.engine import server as engine

    kind = "thrift" if args.thrift else "connect"
    if args.action == "start":
        before = engine.status(kind=kind)
        state = engine.start(kind=kind, port=args.port, idle_timeout=args.idle_timeout)
        verb = "already running" if before else "started"
        print(
            f"{kind} engine {verb}: {state['url']} (pid {state['supervisor_pid']}, since "
            f"{state['started_at']}, stops after {state['idle_timeout']:.0f} s idle; "
            f"log {state['log']})"
        )
        return 0
    if args.action == "stop":
        stopped = engine.stop(kind=kind)
        print(f"{kind} engine {'stopped' if stopped else 'was not running'}")
        return 0
    state = engine.status(kind=kind)
    if state is None:
        print(f"{kind} engine: not running")
        return 3
    print(
        f"{kind} engine: running at {state['url']} (pid {state['supervisor_pid']}, server pid "
        f"{state['server_pid']}, since {state['started_at']}, {state['clients']} client "
        f"connection(s) now, log {state['log']})"
    )
    return 0


def _run_target(args: argparse.Namespace) -> int:
    from spark_cdc.core.dbt_project_files import profiles_dir
    from spark_cdc.targets import current_target, profile_name

    target = current_target()
    print(
        f"profile {profile_name()} ({profiles_dir() / 'profiles.yml'}), target {target.name}: "
        f"method {target.method}, host {target.host}"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``spark-cdc`` argument parser."""
    parser = argparse.ArgumentParser(prog="spark-cdc", description=__doc__)
    parser.add_argument(
        "--target", default=None, help="the profile's target (as dbt's --target; SPARK_CDC_TARGET)"
    )
    parser.add_argument(
        "--profiles-dir",
        default=None,
        help="folder of profiles.yml (as dbt's --profiles-dir; DBT_PROFILES_DIR)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    target = commands.add_parser(
        "target",
        help="the profile and target this command line (and dbt) use, and where they come from",
    )
    target.set_defaults(handler=_run_target)
    _extract_parser(commands)
    _stream_parser(commands)
    _debezium_parser(commands)
    _land_parser(commands)
    _json_events_parser(commands)
    _sql_parser(commands)
    _engine_parser(commands)
    add_stream_parser(commands)
    add_parser(commands)
    return parser


def _user_errors() -> tuple[type[Exception], ...]:
    """Errors that are about the input or the environment, reported as one line (exit code 2)."""
    from spark_cdc.change_events.landing import InitialRowsError, LandingConflictError
    from spark_cdc.change_events.model import ChangeEventConfigError
    from spark_cdc.dbt_models.settings import SettingsError
    from spark_cdc.engine.server import EngineError
    from spark_cdc.hash_cdc.config import ConfigError
    from spark_cdc.scaffold.names import AddError
    from spark_cdc.schema_drift.stream import ServerPythonError
    from spark_cdc.session.home_lock import HomeInUseError
    from spark_cdc.session.master_check import MasterUnavailableError
    from spark_cdc.targets import TargetError

    return (
        AddError,
        GeneratorError,
        InitialRowsError,
        LandingConflictError,
        ChangeEventConfigError,
        ConfigError,
        HomeInUseError,
        MasterUnavailableError,
        TargetError,
        EngineError,
        SettingsError,
        ServerPythonError,
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, turn input errors into a clear message and exit code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # dbt's own flags, read the same way by every command here (targets.current_target).
    if args.target:
        os.environ["SPARK_CDC_TARGET"] = args.target
    if args.profiles_dir:
        os.environ["DBT_PROFILES_DIR"] = str(Path(args.profiles_dir).resolve())
    try:
        return args.handler(args)
    except _user_errors() as error:
        print(f"spark-cdc: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
