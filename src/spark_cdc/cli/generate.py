"""``spark-cdc generate-*``: the synthetic generators' commands (full extracts, change events,
Debezium messages, drifting JSON events)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spark_cdc.cli.options import spec_from, spec_options
from spark_cdc.generators.change_events import StreamSpec, write_stream
from spark_cdc.generators.extracts import ExtractSpec, GeneratorError, generate_extracts
from spark_cdc.generators.json_events import JsonEventSpec, write_batches

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
    spec_options(parser, StreamSpec())
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
    if args.max_gap_ms < 1:
        raise GeneratorError("max_gap_ms must be >= 1")
    spec = spec_from(args, StreamSpec)
    manifest = write_stream(spec, args.output, show_progress=not args.no_progress)
    print(json.dumps(manifest))
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
    spec_options(parser, DebeziumSpec())
    parser.set_defaults(handler=_run_debezium)


def _run_debezium(args: argparse.Namespace) -> int:
    from spark_cdc.generators.debezium import DebeziumSpec, write_debezium_stream

    if args.accounts < 1 or args.events < 0 or args.batches < 1:
        raise GeneratorError("accounts >= 1, events >= 0, batches >= 1")
    manifest = write_debezium_stream(spec_from(args, DebeziumSpec), args.output)
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
    spec_options(parser, JsonEventSpec())
    parser.add_argument("--first-batch", type=int, default=1, help="number of the first batch")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=_run_json_events)


def _run_json_events(args: argparse.Namespace) -> int:
    for name in ("new_variation_rate", "malformed_rate"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise GeneratorError(f"{name} must be between 0.0 and 1.0")
    if args.events < 0 or args.event_types < 1 or args.batches < 1 or args.new_event_types < 0:
        raise GeneratorError("events >= 0, event types >= 1, new event types >= 0, batches >= 1")
    if args.type_skew < 0:
        raise GeneratorError("type_skew must be >= 0 (0: equally frequent types)")
    spec = spec_from(args, JsonEventSpec)
    folders = write_batches(args.output, spec, args.first_batch, not args.no_progress)
    print(json.dumps({"batches": [str(folder) for folder in folders]}))
    return 0


def add_generate_parsers(commands: argparse._SubParsersAction) -> None:
    """The four ``generate-*`` commands."""
    _extract_parser(commands)
    _stream_parser(commands)
    _debezium_parser(commands)
    _json_events_parser(commands)
