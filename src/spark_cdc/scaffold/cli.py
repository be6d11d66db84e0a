"""``spark-cdc add change-events | hash-cdc | schema-drift``: a source's files in a dbt project."""

from __future__ import annotations

import argparse
from pathlib import Path

from spark_cdc.scaffold.declared import refuse_taken_names
from spark_cdc.scaffold.names import AddError, columns
from spark_cdc.scaffold.plans import (
    ChangeEventSource,
    HashCdcDataset,
    JsonFeed,
    change_event_files,
    event_groups_option,
    hash_cdc_files,
    schema_drift_files,
)
from spark_cdc.scaffold.project import existing_models, find_project, write_files


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project-dir", type=Path, default=None, help="the dbt project (default: this folder)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the files, write nothing")


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register ``add`` and its three kinds."""
    parser = commands.add_parser(
        "add",
        help="add a change-event source, a hash-CDC dataset or a JSON feed to a dbt project",
        description=(
            "Write the dbt files of one source into the dbt project of this folder (or "
            "--project-dir): thin model files over the spark_cdc library and macros, and one "
            "YAML file with the source's settings, docs and tests. Never overwrites."
        ),
    )
    kinds = parser.add_subparsers(dest="kind", required=True)

    events = kinds.add_parser("change-events", help="a change-event source (events or Debezium)")
    events.add_argument("name", help="the source's name, e.g. orders")
    events.add_argument("--key", action="append", default=[], help="a key column (repeat)")
    events.add_argument(
        "--column", action="append", default=[], help="name:type of a target column (repeat)"
    )
    events.add_argument("--debezium", action="store_true", help="input: Debezium messages")
    events.add_argument(
        "--initial-rows", action="store_true", help="the source has rows before its first event"
    )
    events.add_argument("--allowed-lateness", default="none", help="e.g. '6 hours' (none)")
    events.add_argument(
        "--evolve-columns", action="store_true", help="undeclared image columns become columns"
    )
    events.add_argument(
        "--ignore-null-updates",
        action="store_true",
        help="an update's NULL (or absent) columns keep their values: partial updates",
    )
    events.add_argument(
        "--sequence-by",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column of the landing table that orders the events, before event_ts "
        "(repeatable, compared in the order given)",
    )
    events.add_argument(
        "--except-column",
        action="append",
        default=[],
        metavar="NAME",
        help="an image column --evolve-columns never takes in (repeatable)",
    )
    events.add_argument(
        "--stored-as-scd-type",
        type=int,
        choices=(1, 2),
        default=2,
        help="2: a history and the current table (default); 1: the current table only",
    )
    events.add_argument(
        "--track-history",
        action="append",
        default=None,
        metavar="COLUMN",
        help="a column whose change opens a history version (repeatable); a change of the "
        "others only updates the open version in place",
    )
    events.add_argument(
        "--track-history-except",
        action="append",
        default=None,
        metavar="COLUMN",
        help="a column whose change alone updates the open version in place instead of "
        "opening a history version (repeatable)",
    )
    events.add_argument("--landing-schema", default="landing", help="schema of the landing tables")
    events.add_argument(
        "--accept-ambiguous-order",
        action="store_true",
        help="changes of one key that no position orders warn instead of failing the tests",
    )
    _common(events)
    events.set_defaults(handler=_run_change_events)

    hashed = kinds.add_parser("hash-cdc", help="a hash-CDC dataset of full or delta extracts")
    hashed.add_argument("name", help="the dataset's name, e.g. products")
    hashed.add_argument("--key", action="append", default=[], help="name:type (repeat)")
    hashed.add_argument("--nonkey", action="append", default=[], help="name:type (repeat)")
    hashed.add_argument("--sensitive", action="append", default=[], help="name:type (repeat)")
    hashed.add_argument("--mode", choices=("full", "delta"), default="full")
    hashed.add_argument("--format", choices=("csv", "parquet"), default="csv")
    hashed.add_argument("--max-delete-fraction", type=float, default=0.5)
    hashed.add_argument("--landing-root", default=None, help="where extracts land (absolute)")
    hashed.add_argument(
        "--operation-column",
        default=None,
        help="(--mode delta) the extract's column saying whether a row is a delete: a key it "
        "lacks then stays as it is",
    )
    hashed.add_argument(
        "--delete-value",
        action="append",
        default=[],
        help="a value of --operation-column that marks a delete (repeat; default D)",
    )
    hashed.add_argument(
        "--upsert-value",
        action="append",
        default=[],
        help="a value of --operation-column that marks an insert or update (repeat; default I "
        "and U); any other value is quarantined",
    )
    _common(hashed)
    hashed.set_defaults(handler=_run_hash_cdc)

    feed = kinds.add_parser("schema-drift", help="a JSON event feed whose schemas drift")
    feed.add_argument("name", help="the feed's name, e.g. game_events")
    feed.add_argument("--landing-schema", default="landing", help="schema of the landing table")
    feed.add_argument("--landing-root", default=None, help="the landing folder (absolute)")
    feed.add_argument("--owner", default="data platform", help="owner of the monitoring exposure")
    feed.add_argument(
        "--event-group",
        action="append",
        default=[],
        metavar="NAME=SELECTOR[,SELECTOR...]",
        help="an event group of the feed's stream (repeat, in order; a selector is a glob on "
        "the event type or hash:I/N; the groups must take every type)",
    )
    _common(feed)
    feed.set_defaults(handler=_run_schema_drift)


def _run_change_events(args: argparse.Namespace) -> int:
    declared = {name.lower() for name in columns(args.column, "--column")}
    both = [name for name in args.except_column if name.lower() in declared]
    if both:
        raise AddError(f"--except-column names a declared --column: {', '.join(both)}")
    if args.sequence_by and args.debezium:
        raise AddError("--sequence-by is for feeds of events: a Debezium source has its position")
    source = ChangeEventSource(
        name=args.name,
        keys=args.key,
        columns=columns(args.column, "--column"),
        debezium=args.debezium,
        initial_rows=args.initial_rows,
        allowed_lateness=args.allowed_lateness,
        evolve_columns=args.evolve_columns,
        ignore_null_updates=args.ignore_null_updates,
        except_columns=tuple(args.except_column),
        sequence_by=tuple(args.sequence_by),
        landing_schema=args.landing_schema,
        accept_ambiguous_order=args.accept_ambiguous_order,
        stored_as_scd_type=args.stored_as_scd_type,
        track_history=None if args.track_history is None else tuple(args.track_history),
        track_history_except=(
            None if args.track_history_except is None else tuple(args.track_history_except)
        ),
    )
    files = change_event_files(source)
    landing = f"{args.landing_schema}.{args.name}_change_events"
    land = "--debezium " if args.debezium else ""
    steps = [
        f"spark-cdc land-change-events <folder holding batches/batch-*.jsonl> {land}"
        f"--table {landing}",
        f"dbt build --select stg_change_events__{args.name}+",
    ]
    return _write(args, "change-event source", files, steps)


def _run_hash_cdc(args: argparse.Namespace) -> int:
    dataset = HashCdcDataset(
        name=args.name,
        keys=columns(args.key, "--key"),
        nonkeys=columns(args.nonkey, "--nonkey"),
        sensitive=columns(args.sensitive, "--sensitive"),
        mode=args.mode,
        file_format=args.format,
        max_delete_fraction=args.max_delete_fraction,
        landing_root=args.landing_root,
        operation_column=args.operation_column,
        delete_values=tuple(args.delete_value),
        upsert_values=tuple(args.upsert_value),
    )
    files = hash_cdc_files(dataset)
    root = args.landing_root or "$SPARK_CDC_HOME/landing"
    unless = "" if args.landing_root else " (the var hash_cdc_landing_root sets another root)"
    steps = [
        f"put the extract of a date under {root}/{args.name}/<YYYY-MM-DD>/ ({args.format})"
        + unless,
        f"dbt build --select stg_hash_cdc__{args.name}+ --vars "
        f"'{{hash_cdc_effective_dates: {{{args.name}: YYYY-MM-DD}}}}'",
    ]
    return _write(args, "hash-CDC dataset", files, steps)


def _run_schema_drift(args: argparse.Namespace) -> int:
    groups = event_groups_option(args.event_group)
    feed = JsonFeed(args.name, args.landing_schema, args.landing_root, args.owner, groups)
    files = schema_drift_files(feed)
    steps = [
        f"land JSON-lines files under <landing root>/<batch>/*.jsonl "
        f"($SPARK_CDC_HOME/landing/schema_drift/{args.name} unless set)",
        f"dbt build --select stg_schema_drift__{args.name}+",
    ]
    if groups:
        steps[1:] = [
            f"spark-cdc stream schema-drift {args.name} --ingest-only, and per group "
            f"spark-cdc stream schema-drift {args.name} --group NAME "
            f"({', '.join(name for name, _ in groups)})",
        ]
    return _write(args, "JSON feed", files, steps)


def _write(args: argparse.Namespace, what: str, files: dict[str, str], steps: list[str]) -> int:
    project = find_project(args.project_dir)
    planned = {f"{project.model_path}/{path}": text for path, text in files.items()}
    models = [Path(path).stem for path in planned if not path.endswith(".yml")]
    clashes = existing_models(project, models)
    if clashes:
        rel = clashes[0].relative_to(project.root)
        raise AddError(f"{what} {args.name} exists already ({rel}): nothing was written")
    refuse_taken_names(project.root, project.model_paths, planned, f"{what} {args.name}")
    written = write_files(project, planned, args.dry_run)
    if args.dry_run:
        for path in written:
            print(f"--- {path}\n{planned[path]}")
        print(f"(dry run: nothing written to {project.root})")
        return 0
    print(f"{what} {args.name}: wrote {len(written)} files in {project.root}")
    for path in written:
        print(f"  {path}")
    print("next:")
    for step in steps:
        print(f"  {step}")
    return 0


__all__ = ["AddError", "add_parser"]
